"""The Landlock supervisor's pure parts: its syscall table, where a change may land, how it
reads the caller's arguments. Real notifications are exercised in
tests/integration/test_landlock_jail.py."""

from __future__ import annotations

import errno
import os
import socket
import struct
from pathlib import Path

import pyseccomp as sc
import pytest

from stockade.sandbox import seccomp, supervisor
from stockade.sandbox.supervisor import CallError, WritableTree, may_change

ARCH = {"x86_64": sc.Arch.X86_64, "aarch64": sc.Arch.AARCH64}


@pytest.mark.parametrize("machine", sorted(supervisor.SYSCALL_NUMBERS))
def test_syscall_numbers_match_libseccomp(machine: str) -> None:
    for name, number in supervisor.SYSCALL_NUMBERS[machine].items():
        assert sc.resolve_syscall(ARCH[machine], name) == number, (machine, name)


def test_every_supervised_call_has_a_handler_and_a_number() -> None:
    rows = seccomp.supervised_rules(
        allow_unix_sockets=False, network_by_landlock=True, supervise=True
    )
    rows += seccomp.supervised_rules(
        allow_unix_sockets=True, network_by_landlock=True, supervise=True
    )
    for row in rows:
        assert row.syscall in supervisor.CALLS
        exists = [m for m in ARCH if sc.resolve_syscall(ARCH[m], row.syscall) >= 0]
        for machine in exists:
            assert row.syscall in supervisor.SYSCALL_NUMBERS[machine], (machine, row.syscall)


def test_the_tree_allows_roots_minus_their_read_only_parts() -> None:
    tree = WritableTree(("/work/proj", "/tmp/session"), ("/work/proj/.git/hooks",))
    assert tree.allows("/work/proj") and tree.allows("/work/proj/src/a")
    assert tree.allows("/tmp/session/x")
    assert not tree.allows("/work/project-other/x")  # a prefix is not a parent
    assert not tree.allows("/work/proj/.git/hooks") and not tree.allows("/work/proj/.git/hooks/x")
    assert not tree.allows("/work") and not tree.allows("/etc/passwd")


def test_may_change_decides_from_our_own_fd(tmp_path: Path) -> None:
    inside, outside = tmp_path / "proj", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    (inside / "f").write_text("x")
    (outside / "g").write_text("y")
    (inside / "link").symlink_to(outside / "g")
    tree = WritableTree((str(inside),))
    opened = []
    try:
        for path, flags in (
            (inside / "f", os.O_PATH),
            (inside / "link", os.O_PATH),  # followed: the object is outside
            (inside / "link", os.O_PATH | os.O_NOFOLLOW),  # the link itself: inside
            (outside / "g", os.O_RDONLY),
        ):
            opened.append(os.open(path, flags))
        verdicts = [may_change(fd, tree, callers_own=False) for fd in opened]
        assert verdicts == [True, False, True, False]
        (inside / "f").unlink()  # an unlinked file keeps its place (" (deleted)")
        assert may_change(opened[0], tree, callers_own=False)
        read_end, write_end = os.pipe()
        memfd = os.memfd_create("scratch")
        opened += [read_end, write_end, memfd]
        for private in (read_end, memfd):  # the caller's own pipe or memfd: yes; via a path: no
            assert may_change(private, tree, callers_own=True)
            assert not may_change(private, tree, callers_own=False)
    finally:
        for fd in opened:
            os.close(fd)


def test_proc_self_means_the_caller() -> None:
    class Caller:
        tid = 4321

        def tgid(self) -> int:
            return 4300

    caller = Caller()
    own = supervisor._own_proc
    assert own(b"/proc/self/fd/7", caller) == b"/proc/4300/fd/7"  # type: ignore[arg-type]
    assert own(b"/proc/self", caller) == b"/proc/4300"  # type: ignore[arg-type]
    assert own(b"/proc/thread-self/fd/1", caller) == b"/proc/4300/task/4321/fd/1"  # type: ignore[arg-type]
    assert own(b"/proc/selfish", caller) == b"/proc/selfish"  # type: ignore[arg-type]


class Memory:
    """A caller whose memory is a bytes object at address 0x1000."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self, address: int, size: int) -> bytes:
        if address == 0:
            raise CallError(errno.EFAULT)
        return self.data[address - 0x1000 :][:size]


def test_times_in_every_layout_become_timespecs() -> None:
    times = supervisor._times
    timeval = Memory(struct.pack("<4q", 10, 5, 20, 999_999))
    assert times(timeval, "timeval", 0x1000) == struct.pack("<4q", 10, 5000, 20, 999_999_000)  # type: ignore[arg-type]
    utimbuf = Memory(struct.pack("<qq", 7, 8))
    assert times(utimbuf, "utimbuf", 0x1000) == struct.pack("<4q", 7, 0, 8, 0)  # type: ignore[arg-type]
    assert times(utimbuf, "timespec", 0) is None  # type: ignore[arg-type]
    with pytest.raises(CallError) as bad:
        times(Memory(struct.pack("<4q", 1, 1_000_000, 2, 0)), "timeval", 0x1000)  # type: ignore[arg-type]
    assert bad.value.errno == errno.EINVAL


def test_connect_reaches_the_proxy_address_alone() -> None:
    def sockaddr(host: str, port: int) -> bytes:
        if ":" in host:
            packed = socket.inet_pton(socket.AF_INET6, host)
            return (
                struct.pack("=H", socket.AF_INET6)
                + port.to_bytes(2, "big")
                + bytes(4)
                + packed
                + bytes(4)
            )
        return (
            struct.pack("=H", socket.AF_INET)
            + port.to_bytes(2, "big")
            + socket.inet_aton(host)
            + bytes(8)
        )

    endpoint = supervisor._inet_endpoint
    assert endpoint(socket.AF_INET, sockaddr("127.0.0.1", 3128)) == ("127.0.0.1", 3128)
    assert endpoint(socket.AF_INET6, sockaddr("::ffff:127.0.0.1", 3128)) == ("127.0.0.1", 3128)
    refused_endpoints = [
        ("127.0.0.2", 3128, 3128),
        ("10.0.0.1", 3128, 3128),
        ("127.0.0.1", 3129, 3128),
        ("::1", 3128, 3128),
        ("127.0.0.1", 3128, None),
    ]
    for host, port, proxy in refused_endpoints:
        with pytest.raises(CallError) as refused:
            supervisor._connect(-1, sockaddr(host, port), proxy)
        assert refused.value.errno == errno.EACCES, (host, port)
    unix = struct.pack("=H", socket.AF_UNIX) + b"\0abstract"
    with pytest.raises(CallError) as refused:
        supervisor._connect(-1, unix, 3128)
    assert refused.value.errno == errno.EPERM


def test_int_and_id_arguments_read_like_the_kernel() -> None:
    assert supervisor._int32(0xFFFF_FF9C) == -100  # AT_FDCWD passed as an unsigned register
    assert supervisor._int32((1 << 40) | 5) == 5
    assert supervisor._id(0xFFFF_FFFF) == -1 and supervisor._id((7 << 32) | 1000) == 1000
