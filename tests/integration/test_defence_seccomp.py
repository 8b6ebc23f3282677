"""The seccomp filter, proven against the real kernel inside real bwrap jails.

Each blocked syscall is tried by the probe with arguments the kernel would reject with some
other errno; the control runs (no filter) show that, so EPERM under the filter can only come
from the filter. Runs as the current user and, from root, as `sbxtest` too.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import platform
import select
import signal
import socket
import subprocess
import termios
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from stockade.sandbox import seccomp
from stockade.sandbox.probes.syscalls import PROBES
from tests.integration import defence_support
from tests.integration.defence_support import (
    JAIL,
    as_identity,
    identities,
    is_root,
    jail,
    needs_bwrap,
    probe,
    run,
)

pytestmark = [pytest.mark.integration, needs_bwrap()]
shared_tmp = defence_support.shared_tmp  # fixture

# Calls the kernel itself refuses with EPERM to a process without the capability (checked
# before the arguments), so a control run without the filter cannot tell them apart.
KERNEL_EPERM_WITHOUT_CAPS = {
    "pivot_root",
    "move_mount",
    "fsopen",
    "fsmount",
    "fspick",
    "reboot",
    "swapoff",
    "acct",
}
# ...and these need the capability in the *initial* namespace: only host root shows them.
KERNEL_EPERM_OUTSIDE_INIT_NS = {"swapoff", "acct"}
SIGSYS_VIA_BWRAP = 128 + signal.SIGSYS
# Rules that answer ENOSYS (so libc falls back to a call the filter can inspect).
ENOSYS_SYSCALLS = {
    r.syscall for r in seccomp.rules(allow_unix_sockets=False) if r.errno == errno.ENOSYS
}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("seccomp-cache")


def expected_under_filter(probe_name: str, allow_unix: bool) -> str:
    if syscall_name(probe_name) in ENOSYS_SYSCALLS:
        return "ENOSYS"
    if probe_name == "socket:AF_UNIX" and allow_unix:
        return "OK"
    return "EPERM"


def syscall_name(probe_name: str) -> str:
    return probe_name.split(":")[0]


@pytest.mark.parametrize("identity", identities())
@pytest.mark.parametrize("allow_unix", [False, True])
def test_every_blocked_syscall_fails_with_eperm_in_bwrap(
    identity: str, allow_unix: bool, cache: Path
) -> None:
    fd = seccomp.filter_fd(allow_unix_sockets=allow_unix, cache=cache)
    filtered = run(jail(probe(), seccomp_fd=fd), identity, fds=[fd])
    control = run(jail(probe()), identity)
    assert filtered.returncode == 0, filtered.stderr
    assert control.returncode == 0, control.stderr
    results, unfiltered = json.loads(filtered.stdout), json.loads(control.stdout)
    assert set(results) == {p for p in PROBES if syscall_name(p) in results_names(results)}
    assert len(results) >= 45
    for name, outcome in results.items():
        assert outcome == expected_under_filter(name, allow_unix), name
    for name, outcome in unfiltered.items():
        if syscall_name(name) not in KERNEL_EPERM_WITHOUT_CAPS:
            assert outcome != "EPERM", f"{name}: the control run cannot tell the filter apart"
    assert unfiltered["socket:AF_UNIX"] == "OK"


def results_names(results: dict[str, str]) -> set[str]:
    return {syscall_name(p) for p in results}


@pytest.mark.skipif(os.geteuid() != 0, reason="--cap-add needs root")
def test_capability_gated_calls_are_filtered_even_with_capabilities(cache: Path) -> None:
    """With every capability inside the jail's namespace, EPERM can only be the filter."""
    with_caps = [
        *JAIL[: JAIL.index("--cap-drop")],
        *JAIL[JAIL.index("ALL") + 1 :],
        "--cap-add",
        "ALL",
    ]
    fd = seccomp.filter_fd(allow_unix_sockets=False, cache=cache)
    filtered = json.loads(
        run(jail(probe(), seccomp_fd=fd, base=with_caps), "self", fds=[fd]).stdout
    )
    control = json.loads(run(jail(probe(), base=with_caps), "self").stdout)
    for name in PROBES:
        if name in filtered:
            assert filtered[name] == expected_under_filter(name, False), name
            if syscall_name(name) not in KERNEL_EPERM_OUTSIDE_INIT_NS:
                assert control[name] != "EPERM", name


@pytest.mark.skipif(os.geteuid() != 0, reason="needs host root to show the kernel's answer")
def test_preexec_install_as_host_root_blocks_every_call(cache: Path) -> None:
    """The Landlock backend's path: no namespace, real root, filter loaded in preexec."""
    install = seccomp.preexec_installer(allow_unix_sockets=False, cache=cache)
    filtered = subprocess.run(
        probe(), capture_output=True, text=True, preexec_fn=install, check=True
    )
    control = subprocess.run(probe(), capture_output=True, text=True, check=True)
    results, unfiltered = json.loads(filtered.stdout), json.loads(control.stdout)
    for name, outcome in results.items():
        assert outcome == expected_under_filter(name, False), name
        assert unfiltered[name] != "EPERM", f"{name}: host root should get past the kernel"
    status = Path("/proc/self/status").read_text()
    assert "Seccomp:\t0" in status  # the parent stayed unfiltered


@pytest.mark.parametrize("identity", identities())
def test_preexec_install_as_any_user(identity: str, cache: Path) -> None:
    install = seccomp.preexec_installer(allow_unix_sockets=False, cache=cache)
    out = run(probe(), identity, preexec_fn=install)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)
    assert {v for k, v in results.items() if syscall_name(k) not in ENOSYS_SYSCALLS} == {"EPERM"}


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x32 and i386 ABIs are x86_64 only")
@pytest.mark.parametrize("identity", identities())
@pytest.mark.parametrize("abi", ["x32", "int80"])
def test_foreign_abis_are_killed(identity: str, abi: str, cache: Path) -> None:
    control = run(jail(probe(abi)), identity)
    if control.returncode != 0:
        pytest.skip(f"this kernel cannot run the {abi} ABI at all: {control.returncode}")
    assert json.loads(control.stdout)[abi] in {"OK", "ENOSYS"}
    fd = seccomp.filter_fd(allow_unix_sockets=False, cache=cache)
    filtered = run(jail(probe(abi), seccomp_fd=fd), identity, fds=[fd])
    assert filtered.returncode == SIGSYS_VIA_BWRAP, (filtered.returncode, filtered.stdout)
    assert filtered.stdout == ""


# ----------------------------------------------------------------------------------- TIOCSTI


def _make_controlling_tty() -> None:
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _run_on_pty(argv: list[str], identity: str, fds: list[int]) -> tuple[dict[str, str], bytes]:
    master, slave = os.openpty()
    try:
        if identity != "self":
            os.fchown(slave, as_identity(identity)["user"], -1)
        proc = subprocess.Popen(
            argv,
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=tuple(fds),
            preexec_fn=_make_controlling_tty,
            **as_identity(identity),
        )
        for fd in fds:
            os.close(fd)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        echoed = b""
        while select.select([master], [], [], 0.2)[0]:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            echoed += chunk
        return json.loads(out), echoed
    finally:
        os.close(master)
        os.close(slave)


@pytest.mark.parametrize("identity", identities())
def test_tiocsti_cannot_inject_into_the_terminal(identity: str, cache: Path) -> None:
    legacy = Path("/proc/sys/dev/tty/legacy_tiocsti")
    if legacy.exists() and legacy.read_text().strip() == "0" and not is_root(identity):
        pytest.skip("the kernel already disables TIOCSTI (dev.tty.legacy_tiocsti = 0)")
    injected, echoed = _run_on_pty(jail(probe("tiocsti")), identity, [])
    assert injected == {"plain": "OK", "high-bits": "OK"}  # control: the attack works
    assert b"id" in echoed
    fd = seccomp.filter_fd(allow_unix_sockets=False, cache=cache)
    blocked, echoed = _run_on_pty(jail(probe("tiocsti"), seccomp_fd=fd), identity, [fd])
    assert blocked == {"plain": "EPERM", "high-bits": "EPERM"}
    assert b"id" not in echoed


# ---------------------------------------------------------------------------------- AF_UNIX


@pytest.fixture
def host_socket(shared_tmp: Path) -> Iterator[tuple[Path, list[bytes]]]:
    """A listening AF_UNIX socket on the host that anyone may connect to."""
    where = shared_tmp
    path = where / "host.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    path.chmod(0o777)
    server.listen(4)
    server.settimeout(0.2)
    received: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                received.append(conn.recv(100))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path, received
    stop.set()
    thread.join()
    server.close()


@pytest.mark.parametrize("identity", identities())
def test_af_unix_connect_to_a_host_socket(
    identity: str, cache: Path, host_socket: tuple[Path, list[bytes]]
) -> None:
    path, received = host_socket
    bind = ["--bind", str(path.parent), str(path.parent)]
    control = run(jail(probe("unix-connect", str(path)), extra=bind), identity)
    assert json.loads(control.stdout) == {"socket": "OK", "connect": "OK"}, control.stderr

    fd = seccomp.filter_fd(allow_unix_sockets=False, cache=cache)
    denied = run(
        jail(probe("unix-connect", str(path)), seccomp_fd=fd, extra=bind), identity, fds=[fd]
    )
    assert json.loads(denied.stdout)["socket"] == errno.errorcode[errno.EPERM]

    fd = seccomp.filter_fd(allow_unix_sockets=True, cache=cache)
    allowed = run(
        jail(probe("unix-connect", str(path)), seccomp_fd=fd, extra=bind), identity, fds=[fd]
    )
    assert json.loads(allowed.stdout) == {"socket": "OK", "connect": "OK"}
    assert received.count(b"hello from the jail\n") == 2  # control + allowed, never denied


# ------------------------------------------------------------------------ ordinary programs

ORDINARY = {
    "sh": (["/bin/sh", "-c", "echo hello | tr a-z A-Z"], "HELLO"),
    "ls": (["/bin/ls", "/usr"], "bin"),
    "python-threads-fork-spawn": (
        [
            "/usr/bin/python3",
            "-c",
            "import os, subprocess, threading\n"
            "t = threading.Thread(target=print, args=('thread',)); t.start(); t.join()\n"
            "pid = os.fork()\n"
            "os._exit(0) if pid == 0 else os.waitpid(pid, 0)\n"
            "print(subprocess.run(['echo', 'child'], capture_output=True, text=True).stdout)\n"
            "pid = os.posix_spawn('/bin/true', ['true'], {}); print(os.waitpid(pid, 0)[1])\n"
            "import socket; a, b = socket.socketpair(); a.send(b'pair'); print(b.recv(4))\n",
        ],
        "thread\nchild\n\n0\nb'pair'",
    ),
}


@pytest.mark.parametrize("identity", identities())
@pytest.mark.parametrize("program", sorted(ORDINARY))
def test_ordinary_programs_still_work(identity: str, program: str, cache: Path) -> None:
    argv, expected = ORDINARY[program]
    fd = seccomp.filter_fd(allow_unix_sockets=False, cache=cache)
    out = run(jail(argv, seccomp_fd=fd), identity, fds=[fd])
    assert out.returncode == 0, out.stderr
    assert expected in out.stdout


@pytest.mark.parametrize("identity", identities())
def test_git_status_works_under_the_filter(identity: str, cache: Path, shared_tmp: Path) -> None:
    repo = shared_tmp
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "new.txt").write_text("x\n")
    fd = seccomp.filter_fd(allow_unix_sockets=False, cache=cache)
    argv = jail(
        ["git", "-c", f"safe.directory={repo}", "-C", str(repo), "status", "--porcelain"],
        seccomp_fd=fd,
    )
    out = run(argv, identity, fds=[fd])
    assert out.returncode == 0, out.stderr
    assert "?? new.txt" in out.stdout
