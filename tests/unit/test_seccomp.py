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

from stockade.errors import SandboxUnavailable
from stockade.sandbox import seccomp
from stockade.sandbox.probes import syscalls as probe

RET_ALLOW = 0x7FFF_0000
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


def test_every_table_row_is_denied_with_its_errno(compiled: tuple[str, bytes, bytes]) -> None:
    machine, program, _ = compiled
    arch = AUDIT_ARCH[machine]
    checked = 0
    for rule in seccomp.rules(allow_unix_sockets=False):
        number = nr(machine, rule.syscall)
        if number < 0:  # does not exist on this arch (iopl on aarch64)
            continue
        args = [0] * 6
        for index, _mask, value in rule.args:
            args[index] = value
        assert run_bpf(program, number, arch, tuple(args)) == errno_action(rule.errno), rule
        checked += 1
    assert checked >= 40


@pytest.mark.parametrize(
    "name",
    [
        "read",
        "write",
        "openat",
        "execve",
        "getpid",
        "mmap",
        "socketpair",
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
    names = {r.syscall for r in seccomp.rules(allow_unix_sockets=False)} - {"ioctl", "socket"}
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
    assert "socket(arg0 = 0x1) -> EPERM" in strict
    assert "socket(" not in loose and "AF_UNIX sockets: allowed" in loose
    assert "killed" in strict
