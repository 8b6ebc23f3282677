"""The compiled seccomp program, checked by running it on a tiny classic-BPF interpreter.

These are pure-logic tests: they run the exact bytes bwrap would load against synthetic
`seccomp_data` records (any arch, x32 numbers, high bits in ioctl cmds), so the aarch64
program is checked on an x86_64 machine too. Kernel-level proof lives in
tests/integration/test_defence_seccomp.py.
"""

from __future__ import annotations

import errno
import os
import stat
import struct
from pathlib import Path
from types import SimpleNamespace

import pyseccomp as sc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stockade.errors import SandboxUnavailable
from stockade.sandbox import seccomp
from stockade.sandbox.probes import syscalls as probe

RET_ALLOW = 0x7FFF_0000
RET_USER_NOTIF = 0x7FC0_0000
RET_KILL_PROCESS = 0x8000_0000
AUDIT_ARCH = {"x86_64": sc.Arch.X86_64, "aarch64": sc.Arch.AARCH64}
X32_SYSCALL_BIT = 0x4000_0000


def run_bpf(program: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """Evaluate a seccomp cBPF program the way the kernel does; returns the action word."""
    args6 = (tuple(args) + (0,) * 6)[:6]
    data = struct.pack("<iIQ6Q", nr, arch, 0, *args6)
    insns = [struct.unpack_from("<HBBI", program, i) for i in range(0, len(program), 8)]
    acc, x, mem, pc = 0, 0, [0] * 16, 0
    while True:
        code, jt, jf, k = insns[pc]
        pc += 1
        cls = code & 0x07
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("<I", data, k)[0]
        elif code == 0x00:  # ld #k
            acc = k
        elif code == 0x60:  # ld M[k]
            acc = mem[k]
        elif code == 0x02:  # st M[k]
            mem[k] = acc
        elif code == 0x07:  # tax
            x = acc
        elif cls == 0x04:  # alu
            op, src = code & 0xF0, (x if code & 0x08 else k)
            ops = {
                0x00: acc + src,
                0x10: acc - src,
                0x50: acc & src,
                0x40: acc | src,
                0xA0: acc ^ src,
            }
            acc = ops[op] & 0xFFFF_FFFF
        elif cls == 0x05:  # jmp
            op, src = code & 0xF0, (x if code & 0x08 else k)
            if op == 0x00:
                pc += k
                continue
            taken = {0x10: acc == src, 0x20: acc > src, 0x30: acc >= src, 0x40: bool(acc & src)}[op]
            pc += jt if taken else jf
        elif code == 0x06:  # ret #k
            return int(k)
        elif code == 0x16:  # ret a
            return acc
        else:
            raise AssertionError(f"opcode {code:#x} not modelled")


def nr(machine: str, name: str) -> int:
    return int(sc.resolve_syscall(AUDIT_ARCH[machine], name))


@pytest.fixture(scope="module", params=["x86_64", "aarch64"])
def compiled(request: pytest.FixtureRequest) -> tuple[str, bytes, bytes]:
    machine = request.param
    return (
        machine,
        seccomp.compile_program(allow_unix_sockets=False, machine=machine),
        seccomp.compile_program(allow_unix_sockets=True, machine=machine),
    )


def errno_action(err: int) -> int:
    return 0x0005_0000 | err


def matching_args(rule: seccomp.DenyRule | seccomp.SupervisedRule) -> tuple[int, ...]:
    """Arguments a row matches: its MASKED_EQ values, one more than its `above` bounds."""
    args = [0] * 6
    for index, _mask, value in rule.args:
        args[index] = value
    for index, value in rule.above:
        args[index] = value + 1
    return tuple(args)


OPTION_SETS = [
    {"allow_unix_sockets": unix, "network_by_landlock": landlock, "supervise": supervise}
    for unix in (False, True)
    for landlock in (False, True)
    for supervise in (False, True)
]


@pytest.mark.parametrize(
    "options", OPTION_SETS, ids=lambda o: "-".join(k for k, v in o.items() if v)
)
@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_every_table_row_is_denied_with_its_errno(machine: str, options: dict[str, bool]) -> None:
    program = seccomp.compile_program(machine=machine, **options)
    arch = AUDIT_ARCH[machine]
    checked = 0
    for rule in seccomp.rules(**options):
        number = nr(machine, rule.syscall)
        if number < 0:  # does not exist on this arch (iopl on aarch64), or unknown to libseccomp
            continue
        verdict = run_bpf(program, number, arch, matching_args(rule))
        assert verdict == errno_action(rule.errno), rule
        checked += 1
    assert checked >= 100
    for supervised in seccomp.supervised_rules(**options):
        number = nr(machine, supervised.syscall)
        if number >= 0:
            assert run_bpf(program, number, arch, matching_args(supervised)) == RET_USER_NOTIF


@pytest.mark.parametrize(
    "name",
    [
        "read",
        "write",
        "openat",
        "execve",
        "getpid",
        "mmap",
        "landlock_restrict_self",
        "prctl",
        "wait4",
    ],
)
def test_ordinary_syscalls_are_allowed(compiled: tuple[str, bytes, bytes], name: str) -> None:
    machine, program, _ = compiled
    assert run_bpf(program, nr(machine, name), AUDIT_ARCH[machine]) == RET_ALLOW


def test_ioctl_high_bits_do_not_dodge_the_tiocsti_rule(compiled: tuple[str, bytes, bytes]) -> None:
    machine, program, _ = compiled
    ioctl = nr(machine, "ioctl")
    for cmd in (seccomp.TIOCSTI, seccomp.TIOCLINUX):
        for high in (0, 1 << 32, 0xFFFF_FFFF << 32):
            verdict = run_bpf(program, ioctl, AUDIT_ARCH[machine], (3, cmd | high))
            assert verdict == errno_action(errno.EPERM)
    assert run_bpf(program, ioctl, AUDIT_ARCH[machine], (1, 0x5401)) == RET_ALLOW  # TCGETS


def test_unix_sockets_denied_unless_allowed(compiled: tuple[str, bytes, bytes]) -> None:
    machine, strict, loose = compiled
    socket_nr, arch = nr(machine, "socket"), AUDIT_ARCH[machine]
    assert run_bpf(strict, socket_nr, arch, (1, 1, 0)) == errno_action(errno.EPERM)
    assert run_bpf(strict, socket_nr, arch, ((1 << 32) | 1, 1, 0)) == errno_action(errno.EPERM)
    assert run_bpf(loose, socket_nr, arch, (1, 1, 0)) == RET_ALLOW
    for program in (strict, loose):
        assert run_bpf(program, socket_nr, arch, (2, 1, 0)) == RET_ALLOW  # AF_INET


# ------------------------------------------------------------------ the socket allow-list

IPPROTO_SCTP, IPPROTO_SMC, IPPROTO_MPTCP = 132, 256, 262
AF_PACKET, AF_VSOCK, AF_TIPC, AF_RDS, AF_SMC, AF_ALG, AF_BLUETOOTH = 17, 40, 30, 21, 43, 38, 31
SOCK_NONBLOCK, SOCK_CLOEXEC = 0o4000, 0o2000000


def allowed_by_table(
    allowed: tuple[seccomp.SocketAllowance, ...], family: int, kind: int, protocol: int
) -> bool:
    """The reference: exactly these (family, type, protocol) values, flags aside, no high bits
    anywhere (the kernel would ignore them; the filter refuses them)."""
    return any(
        family == a.family and kind & seccomp.SOCK_TYPE_MASK in a.types and protocol in a.protocols
        for a in allowed
    )


@pytest.fixture(
    scope="module", params=[(m, u, t) for m in AUDIT_ARCH for u in (0, 1) for t in (0, 1)]
)
def socket_program(request: pytest.FixtureRequest) -> tuple[str, bool, bool, bytes]:
    machine, unix, tcp_only = request.param
    program = seccomp.compile_program(
        allow_unix_sockets=bool(unix), network_by_landlock=bool(tcp_only), machine=machine
    )
    return machine, bool(unix), bool(tcp_only), program


interesting = st.sampled_from(
    [0, 1, 2, 3, 5, 6, 10, 16, 17, 58, 132, 256, 262, 0xF, 1 << 32, (1 << 32) | 2,
     (1 << 32) | 6, 0xFFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF, 0xFFFF_FFFF_0000_0002]
)  # fmt: skip
arguments = st.one_of(interesting, st.integers(0, 64), st.integers(0, (1 << 64) - 1))
flags = st.sampled_from([0, SOCK_NONBLOCK, SOCK_CLOEXEC, SOCK_NONBLOCK | SOCK_CLOEXEC])


@settings(max_examples=300, deadline=None)
@given(family=arguments, kind=arguments, extra=flags, protocol=arguments)
def test_socket_verdicts_match_the_allow_list(
    socket_program: tuple[str, bool, bool, bytes], family: int, kind: int, extra: int, protocol: int
) -> None:
    machine, unix, tcp_only, program = socket_program
    allowed = seccomp.socket_allow_list(allow_unix_sockets=unix, tcp_only=tcp_only)
    args = (family, kind | extra, protocol)
    verdict = run_bpf(program, nr(machine, "socket"), AUDIT_ARCH[machine], args)
    expected = RET_ALLOW if allowed_by_table(allowed, family, kind | extra, protocol) else None
    assert verdict == (expected or errno_action(errno.EPERM)), args


def test_the_named_escapes_are_refused_everywhere(
    socket_program: tuple[str, bool, bool, bytes],
) -> None:
    machine, _, _, program = socket_program
    socket_nr, arch = nr(machine, "socket"), AUDIT_ARCH[machine]
    refused = [
        (2, 1, IPPROTO_MPTCP),  # MPTCP: falls back to TCP, invisible to Landlock
        (10, 1, IPPROTO_MPTCP),
        (2, 1, IPPROTO_SCTP),
        (2, 5, IPPROTO_SCTP),
        (2, 1, IPPROTO_SMC),
        (AF_SMC, 1, 0),
        (AF_VSOCK, 1, 0),
        (AF_TIPC, 5, 0),
        (AF_RDS, 5, 0),
        (AF_PACKET, 3, 0x300),
        (AF_ALG, 5, 0),
        (AF_BLUETOOTH, 3, 0),
        (2, 3, 1),  # raw ICMP
        (16, 3, 4),  # netlink sock_diag: every socket on the host
        (16, 3, 15),  # netlink uevents
        ((1 << 32) | 2, 1, 6),  # high bits never pass
        (2, 1, (1 << 32) | IPPROTO_MPTCP),
    ]
    for args in refused:
        assert run_bpf(program, socket_nr, arch, args) == errno_action(errno.EPERM), args
    for args in [(2, 1, 0), (2, 1 | SOCK_NONBLOCK | SOCK_CLOEXEC, 6), (10, 1, 0), (16, 3, 0)]:
        assert run_bpf(program, socket_nr, arch, args) == RET_ALLOW, args


def test_udp_only_where_a_namespace_or_the_network_allows_it(
    socket_program: tuple[str, bool, bool, bytes],
) -> None:
    machine, _, tcp_only, program = socket_program
    socket_nr, arch = nr(machine, "socket"), AUDIT_ARCH[machine]
    for args in [(2, 2, 0), (2, 2, 17), (10, 2 | SOCK_CLOEXEC, 0)]:
        expected = errno_action(errno.EPERM) if tcp_only else RET_ALLOW
        assert run_bpf(program, socket_nr, arch, args) == expected, args


def test_socketpair_is_unix_only_whatever_the_options(
    socket_program: tuple[str, bool, bool, bytes],
) -> None:
    machine, _, _, program = socket_program
    pair, arch = nr(machine, "socketpair"), AUDIT_ARCH[machine]
    for kind in (1, 2, 5, 1 | SOCK_CLOEXEC):
        assert run_bpf(program, pair, arch, (1, kind, 0)) == RET_ALLOW
    for args in [(AF_TIPC, 5, 0), (2, 1, 0), (1, 3, 0), (1, 1, 1), ((1 << 32) | 1, 1, 0)]:
        assert run_bpf(program, pair, arch, args) == errno_action(errno.EPERM), args


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_without_a_network_namespace_fast_open_and_listen_are_refused(machine: str) -> None:
    arch = AUDIT_ARCH[machine]
    msg_fastopen = seccomp.MSG_FASTOPEN
    for unix, supervise in [(False, False), (False, True), (True, True)]:
        program = seccomp.compile_program(
            allow_unix_sockets=unix, network_by_landlock=True, supervise=supervise, machine=machine
        )
        for name, index in (("sendto", 3), ("sendmsg", 2), ("sendmmsg", 3)):
            args = [3, 0, 0, 0, 0, 0]
            assert run_bpf(program, nr(machine, name), arch, tuple(args)) == RET_ALLOW
            args[index] = msg_fastopen | 0x40  # with MSG_DONTWAIT
            assert run_bpf(program, nr(machine, name), arch, tuple(args)) == errno_action(
                errno.EPERM
            )
        listen = run_bpf(program, nr(machine, "listen"), arch, (3, 16))
        assert listen == (RET_USER_NOTIF if unix else errno_action(errno.EPERM))
        connect = run_bpf(program, nr(machine, "connect"), arch, (3, 0, 16))
        assert connect == (RET_USER_NOTIF if supervise and not unix else RET_ALLOW)
    bwrap = seccomp.compile_program(allow_unix_sockets=True, machine=machine)
    assert run_bpf(bwrap, nr(machine, "listen"), arch, (3, 16)) == RET_ALLOW
    assert run_bpf(bwrap, nr(machine, "sendto"), arch, (3, 0, 0, msg_fastopen)) == RET_ALLOW


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_metadata_calls_go_to_the_supervisor_only_when_supervised(machine: str) -> None:
    arch = AUDIT_ARCH[machine]
    supervised = seccomp.compile_program(
        allow_unix_sockets=False, network_by_landlock=True, supervise=True, machine=machine
    )
    plain = seccomp.compile_program(allow_unix_sockets=False, machine=machine)
    for rule in seccomp.SUPERVISED_METADATA:
        number = nr(machine, rule.syscall)
        if number < 0:  # chmod, chown, utimes... exist on x86_64 only
            continue
        mode_at = seccomp.CHMOD_MODE_ARGUMENT.get(rule.syscall)
        for mode in (0o644, 0o755, 0o4755, 0o2755, 0o6777, 0o1777):
            args = [3, 0, 0, 0]
            args[mode_at if mode_at is not None else 1] = mode
            verdict = run_bpf(supervised, number, arch, tuple(args))
            setid = mode_at is not None and mode & 0o6000
            assert verdict == (errno_action(errno.EPERM) if setid else RET_USER_NOTIF), rule
            if not setid:
                assert run_bpf(plain, number, arch, tuple(args)) == RET_ALLOW, rule
    ioctl = nr(machine, "ioctl")
    for cmd in seccomp.INODE_FLAG_IOCTLS.values():
        assert run_bpf(supervised, ioctl, arch, (3, cmd)) == errno_action(errno.EPERM)
        assert run_bpf(plain, ioctl, arch, (3, cmd)) == RET_ALLOW


def test_metadata_calls_newer_than_libseccomp_are_refused_by_number() -> None:
    program = seccomp.compile_program(allow_unix_sockets=False, supervise=True)
    machine = os.uname().machine
    for number in seccomp.NEW_SYSCALL_NUMBERS.values():
        assert run_bpf(program, number, AUDIT_ARCH[machine], ()) == errno_action(errno.ENOSYS)


def test_clone_with_namespace_flags_denied_plain_fork_allowed(
    compiled: tuple[str, bytes, bytes],
) -> None:
    machine, program, _ = compiled
    clone, arch = nr(machine, "clone"), AUDIT_ARCH[machine]
    sigchld = 17
    assert run_bpf(program, clone, arch, (sigchld,)) == RET_ALLOW
    assert run_bpf(program, clone, arch, (0x3D0F00,)) == RET_ALLOW  # pthread_create's flags
    for flag in seccomp.NAMESPACE_CLONE_FLAGS.values():
        assert run_bpf(program, clone, arch, (flag | sigchld,)) == errno_action(errno.EPERM)
    assert run_bpf(program, nr(machine, "clone3"), arch) == errno_action(errno.ENOSYS)


FOREIGN = [
    sc.Arch.X86,
    sc.Arch.X32,
    sc.Arch.ARM,
    sc.Arch.AARCH64,
    sc.Arch.X86_64,
    sc.Arch.RISCV64,
    sc.Arch.PPC64LE,
]


def test_other_architectures_are_killed(compiled: tuple[str, bytes, bytes]) -> None:
    machine, program, _ = compiled
    for foreign in FOREIGN:
        if foreign != AUDIT_ARCH[machine]:
            assert run_bpf(program, 20, foreign) == RET_KILL_PROCESS, hex(foreign)


def test_x32_syscall_numbers_are_killed_on_x86_64() -> None:
    program = seccomp.compile_program(allow_unix_sockets=True, machine="x86_64")
    getpid = nr("x86_64", "getpid")
    assert run_bpf(program, getpid, sc.Arch.X86_64) == RET_ALLOW
    assert run_bpf(program, getpid | X32_SYSCALL_BIT, sc.Arch.X86_64) == RET_KILL_PROCESS


def test_probe_numbers_match_libseccomp() -> None:
    """The in-jail probe hardcodes syscall numbers; they must agree with libseccomp's tables."""
    for machine, table in probe.SYSCALL_NUMBERS.items():
        for name, number in table.items():
            assert nr(machine, name) == number, (machine, name)


def test_probe_covers_every_denied_syscall() -> None:
    names = {r.syscall for r in seccomp.rules(allow_unix_sockets=False)} - {
        "ioctl",
        "socket",
        "socketpair",
    }
    probed = {p.split(":")[0] for p in probe.PROBES}
    assert names <= probed


# ---------------------------------------------------------------------------- the disk cache


def test_cache_roundtrip_is_atomic_private_and_validated(tmp_path: Path) -> None:
    seccomp._memo.clear()
    program = seccomp.build_filter_program(allow_unix_sockets=False, cache=tmp_path)
    [cached] = list(tmp_path.iterdir())
    assert cached.name == seccomp.cache_key(allow_unix_sockets=False) + ".bpf"
    assert stat.S_IMODE(cached.stat().st_mode) & 0o077 == 0
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o700 or tmp_path.exists()
    assert seccomp._read_cached(cached) == program

    seccomp._memo.clear()
    blob = bytearray(cached.read_bytes())
    blob[-1] ^= 0xFF  # flip a bit in the program: the digest no longer matches
    cached.write_bytes(bytes(blob))
    assert seccomp._read_cached(cached) is None
    assert seccomp.build_filter_program(allow_unix_sockets=False, cache=tmp_path) == program
    assert seccomp._read_cached(cached) == program  # rewritten


def test_group_writable_cache_is_not_trusted(tmp_path: Path) -> None:
    seccomp._memo.clear()
    seccomp.build_filter_program(allow_unix_sockets=True, cache=tmp_path)
    [cached] = list(tmp_path.iterdir())
    os.chmod(cached, 0o666)
    assert seccomp._read_cached(cached) is None


def test_truncated_or_foreign_cache_files_are_ignored(tmp_path: Path) -> None:
    bad = tmp_path / "x.bpf"
    bad.write_bytes(b"not a program")
    assert seccomp._read_cached(bad) is None
    bad.write_bytes(seccomp._CACHE_MAGIC + b"\0" * 32 + b"\0" * 7)
    assert seccomp._read_cached(bad) is None


def test_options_and_table_change_the_cache_key() -> None:
    assert seccomp.cache_key(allow_unix_sockets=False) != seccomp.cache_key(allow_unix_sockets=True)
    assert seccomp.cache_key(allow_unix_sockets=False, machine="x86_64") != seccomp.cache_key(
        allow_unix_sockets=False, machine="aarch64"
    )


def test_a_table_row_libseccomp_does_not_know_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    bogus = (*seccomp.DENY_TABLE, seccomp.DenyRule("no_such_syscall", errno.EPERM, "typo"))
    monkeypatch.setattr(seccomp, "DENY_TABLE", bogus)
    with pytest.raises(SandboxUnavailable, match="no_such_syscall"):
        seccomp.compile_program(allow_unix_sockets=True)


def test_unsupported_machine_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "uname", lambda: SimpleNamespace(machine="riscv64"))
    with pytest.raises(SandboxUnavailable, match="riscv64") as info:
        seccomp.cache_key(allow_unix_sockets=False)
    assert info.value.fix


def test_filter_fd_is_sealed_cloexec_and_at_offset_zero(tmp_path: Path) -> None:
    fd = seccomp.filter_fd(allow_unix_sockets=False, cache=tmp_path)
    try:
        assert not os.get_inheritable(fd)
        program = seccomp.build_filter_program(allow_unix_sockets=False, cache=tmp_path)
        assert os.read(fd, 1 << 16) == program
        with pytest.raises(PermissionError):
            os.write(fd, b"x")
    finally:
        os.close(fd)


def test_warm_path_does_not_import_pyseccomp(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys; from pathlib import Path; from stockade.sandbox import seccomp;"
        f"seccomp.filter_fd(allow_unix_sockets=False, cache=Path({str(tmp_path)!r}));"
        "print('pyseccomp' in sys.modules)"
    )
    cold = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    warm = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (cold.stdout.strip(), warm.stdout.strip()) == ("True", "False"), cold.stderr


def test_describe_lists_every_denied_syscall_and_the_unix_option() -> None:
    strict = "\n".join(seccomp.describe(allow_unix_sockets=False))
    loose = "\n".join(seccomp.describe(allow_unix_sockets=True))
    for rule in seccomp.DENY_TABLE:
        assert rule.syscall in strict and rule.syscall in loose
    sockets = next(
        line for line in seccomp.describe(allow_unix_sockets=False) if "socket()" in line
    )
    assert "AF_INET type 1 protocol 0/6" in sockets and "AF_UNIX" not in sockets
    assert "AF_UNIX type 1/2/5" in loose and "AF_UNIX sockets: allowed" in loose
    assert seccomp.UNIX_SOCKET_RULE in seccomp.rules(allow_unix_sockets=False)
    assert seccomp.UNIX_SOCKET_RULE not in seccomp.rules(allow_unix_sockets=True)
    assert "killed" in strict
    landlock = "\n".join(
        seccomp.describe(allow_unix_sockets=False, network_by_landlock=True, supervise=True)
    )
    assert "MSG_FASTOPEN" in landlock and "listen" in landlock
    assert "fchmodat -> supervisor" not in landlock and "-> supervisor" in landlock
