"""Try every syscall the seccomp filter denies, for real, and print errno names as JSON.

Every call uses arguments the kernel would reject on its own with an errno other than EPERM
(a bad pointer, an invalid flag, fd -1), so nothing happens even without a filter, and an
EPERM can only come from the filter (or, for a few capability-gated calls, from a jail that
dropped the capability first - tests that want proof run those with capabilities).

Usage: python3 -I -S syscalls.py [MODE]
  syscalls           (default) {"probe": "EPERM" | "OK" | "<errno name>", ...}
  unix-connect PATH  {"connect": "OK" | "<errno name>"} connecting an AF_UNIX socket to PATH
  tiocsti            push "id\\n" into fd 0's terminal, plain and with high cmd bits set
  x32                an x32-ABI getpid (x86_64); killed by SIGSYS under the filter
  int80              an i386 getpid via int 0x80 (x86_64); killed by SIGSYS under the filter
"""

from __future__ import annotations

import ctypes
import errno
import json
import mmap
import os
import platform
import sys

SYSCALL_NUMBERS: dict[str, dict[str, int]] = {
    "x86_64": {
        "ptrace": 101,
        "process_vm_readv": 310,
        "process_vm_writev": 311,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "unshare": 272,
        "setns": 308,
        "mount": 165,
        "umount2": 166,
        "pivot_root": 155,
        "open_tree": 428,
        "move_mount": 429,
        "fsopen": 430,
        "fsconfig": 431,
        "fsmount": 432,
        "fspick": 433,
        "mount_setattr": 442,
        "keyctl": 250,
        "add_key": 248,
        "request_key": 249,
        "bpf": 321,
        "perf_event_open": 298,
        "userfaultfd": 323,
        "kexec_load": 246,
        "kexec_file_load": 320,
        "init_module": 175,
        "finit_module": 313,
        "delete_module": 176,
        "reboot": 169,
        "swapon": 167,
        "swapoff": 168,
        "acct": 163,
        "iopl": 172,
        "ioperm": 173,
        "open_by_handle_at": 304,
        "clone": 56,
        "clone3": 435,
        "ioctl": 16,
        "socket": 41,
        "getpid": 39,
        "chmod": 90,
        "fchmod": 91,
        "fchmodat": 268,
        "fchmodat2": 452,
        "creat": 85,
        "mknod": 133,
        "mknodat": 259,
        "open": 2,
        "openat": 257,
        "openat2": 437,
    },
    "aarch64": {
        "ptrace": 117,
        "process_vm_readv": 270,
        "process_vm_writev": 271,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "unshare": 97,
        "setns": 268,
        "mount": 40,
        "umount2": 39,
        "pivot_root": 41,
        "open_tree": 428,
        "move_mount": 429,
        "fsopen": 430,
        "fsconfig": 431,
        "fsmount": 432,
        "fspick": 433,
        "mount_setattr": 442,
        "keyctl": 219,
        "add_key": 217,
        "request_key": 218,
        "bpf": 280,
        "perf_event_open": 241,
        "userfaultfd": 282,
        "kexec_load": 104,
        "kexec_file_load": 294,
        "init_module": 105,
        "finit_module": 273,
        "delete_module": 106,
        "reboot": 142,
        "swapon": 224,
        "swapoff": 225,
        "acct": 89,
        "open_by_handle_at": 265,
        "clone": 220,
        "clone3": 435,
        "ioctl": 29,
        "socket": 198,
        "getpid": 172,
        "fchmod": 52,
        "fchmodat": 53,
        "fchmodat2": 452,
        "mknodat": 33,
        "openat": 56,
        "openat2": 437,
    },
}

BAD = 1  # an unmapped user address: the kernel's copy_from_user fails with EFAULT
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
CLONE_SIGHAND = 0x800  # without CLONE_VM: always EINVAL, so no process is ever created
CLONE_NS = {
    "CLONE_NEWNS": 0x20000,
    "CLONE_NEWCGROUP": 0x2000000,
    "CLONE_NEWUTS": 0x4000000,
    "CLONE_NEWIPC": 0x8000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
    "CLONE_NEWTIME": 0x80,
}

SETID_MODES = {"setuid": 0o4755, "setgid": 0o2755}
S_IFREG, O_WRONLY = 0o100000, 0o1
CREATING = {"create": 0o100, "tmpfile": 0o20200000}  # O_CREAT, O_TMPFILE

# probe name ("syscall" or "syscall:variant") -> harmless, invalid arguments
PROBES: dict[str, tuple[int, ...]] = {
    "ptrace": (2, 0x7FFFFFF0, 0, 0),  # PEEKDATA on a pid above pid_max: ESRCH
    "process_vm_readv": (0, 0, 0, 0, 0, 1),  # flags must be 0: EINVAL
    "process_vm_writev": (0, 0, 0, 0, 0, 1),
    "io_uring_setup": (1, 0),  # params NULL: EFAULT
    "io_uring_enter": (-1, 0, 0, 0, 0, 0),  # EBADF
    "io_uring_register": (-1, 0, 0, 0),
    "unshare": (0x1,),  # not a namespace flag: EINVAL
    "setns": (-1, 0),
    "mount": (BAD, BAD, BAD, 0, 0),
    "umount2": (0, 0x80000000),  # unknown flag: EINVAL
    "pivot_root": (0, 0),
    "open_tree": (-1, 0, 0xFFFFFFFF),
    "move_mount": (-1, 0, -1, 0, 0xFFFFFFFF),
    "fsopen": (0, 0xFFFFFFFF),
    "fsconfig": (-1, 0xFFFF, 0, 0, 0),
    "fsmount": (-1, 0xFFFFFFFF, 0),
    "fspick": (-1, 0, 0xFFFFFFFF),
    "mount_setattr": (-1, 0, 0xFFFFFFFF, 0, 0),
    "keyctl": (0xFFFF, 0, 0, 0, 0),  # unknown command: EOPNOTSUPP
    "add_key": (0, 0, 0, 0, 0),
    "request_key": (0, 0, 0, 0),
    "bpf": (0xFFFF, 0, 0),
    "perf_event_open": (0, 0, -1, -1, 0xFFFFFFFF),
    "userfaultfd": (0x80000001,),  # USER_MODE_ONLY plus an unknown flag: EINVAL
    "kexec_load": (0, 1000, 0, 0x8000),
    "kexec_file_load": (-1, -1, 0, 0, 0xFFFFFFFF),
    "init_module": (0, 0, 0),
    "finit_module": (-1, 0, 0xFFFF),
    "delete_module": (BAD, 0),
    "reboot": (0, 0, 0, 0),  # wrong magic numbers: EINVAL
    "swapon": (0, 0xFFFFFFFF),
    "swapoff": (BAD,),
    "acct": (BAD,),
    "iopl": (4,),  # levels go to 3: EINVAL
    "ioperm": (0xFFFFFFFF, 1, 1),
    "open_by_handle_at": (-1, 0, 0),
    **{f"clone:{flag}": (value | CLONE_SIGHAND, 0, 0, 0, 0) for flag, value in CLONE_NS.items()},
    "clone3": (0, 0),  # size 0: EINVAL (the filter answers ENOSYS)
    "ioctl:TIOCSTI": (-1, TIOCSTI, 0),
    "ioctl:TIOCSTI-high-bits": (-1, TIOCSTI | (1 << 32), 0),
    "ioctl:TIOCLINUX": (-1, TIOCLINUX, 0),
    "ioctl:TIOCLINUX-high-bits": (-1, TIOCLINUX | (0xFFFF << 48), 0),
    "socket:AF_UNIX": (1, 1, 0),  # SOCK_STREAM
    # setuid/setgid modes on a bad path pointer (EFAULT) or fd -1 (EBADF)
    **{f"chmod:{bit}": (BAD, mode) for bit, mode in SETID_MODES.items()},
    **{f"fchmod:{bit}": (-1, mode) for bit, mode in SETID_MODES.items()},
    **{f"fchmodat:{bit}": (-1, BAD, mode) for bit, mode in SETID_MODES.items()},
    **{f"fchmodat2:{bit}": (-1, BAD, mode, 0) for bit, mode in SETID_MODES.items()},
    **{f"creat:{bit}": (BAD, mode) for bit, mode in SETID_MODES.items()},
    **{f"mknod:{bit}": (BAD, S_IFREG | mode, 0) for bit, mode in SETID_MODES.items()},
    **{f"mknodat:{bit}": (-1, BAD, S_IFREG | mode, 0) for bit, mode in SETID_MODES.items()},
    **{
        f"open:{how}-{bit}": (BAD, flags | O_WRONLY, mode)
        for how, flags in CREATING.items()
        for bit, mode in SETID_MODES.items()
    },
    **{
        f"openat:{how}-{bit}": (-1, BAD, flags | O_WRONLY, mode)
        for how, flags in CREATING.items()
        for bit, mode in SETID_MODES.items()
    },
    "openat2": (-1, BAD, BAD, 24),  # EFAULT (the filter answers ENOSYS)
}

_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long


def _call(number: int, *args: int) -> str:
    ctypes.set_errno(0)
    result = _syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args))
    if result == -1:
        return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
    if result >= 0 and number == SYSCALL_NUMBERS[platform.machine()].get("socket"):
        os.close(result)
    return "OK"


def probe_syscalls() -> dict[str, str]:
    numbers = SYSCALL_NUMBERS[platform.machine()]
    results = {}
    for probe, args in PROBES.items():
        name = probe.split(":")[0]
        if name in numbers:
            results[probe] = _call(numbers[name], *args)
    return results


def unix_connect(path: str) -> dict[str, str]:
    import socket

    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError as exc:
        return {"socket": errno.errorcode.get(exc.errno or 0, "?"), "connect": "not tried"}
    try:
        sock.connect(path)
        sock.sendall(b"hello from the jail\n")
        return {"socket": "OK", "connect": "OK"}
    except OSError as exc:
        return {"socket": "OK", "connect": errno.errorcode.get(exc.errno or 0, "?")}
    finally:
        sock.close()


def tiocsti() -> dict[str, str]:
    numbers = SYSCALL_NUMBERS[platform.machine()]
    results = {}
    for variant, high in (("plain", 0), ("high-bits", 1 << 32)):
        for char in b"id\n":
            byte = ctypes.c_char(bytes([char]))
            ctypes.set_errno(0)
            rc = _syscall(
                ctypes.c_long(numbers["ioctl"]),
                ctypes.c_long(0),
                ctypes.c_long(TIOCSTI | high),
                ctypes.byref(byte),
            )
            if rc == -1:
                results[variant] = errno.errorcode.get(ctypes.get_errno(), "?")
                break
        else:
            results[variant] = "OK"
    return results


def x32_getpid() -> dict[str, str]:
    return {"x32": _call(0x40000000 | 39)}


def int80_getpid() -> dict[str, str]:
    """Run `mov eax, 20 (i386 getpid); int 0x80; ret` from an executable page."""
    code = bytes([0xB8, 20, 0, 0, 0, 0xCD, 0x80, 0xC3])
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    result = ctypes.CFUNCTYPE(ctypes.c_int)(address)()
    return {"int80": "OK" if result == os.getpid() else str(result)}


def main(argv: list[str]) -> int:
    mode = argv[1] if len(argv) > 1 else "syscalls"
    if mode == "syscalls":
        out = probe_syscalls()
    elif mode == "unix-connect":
        out = unix_connect(argv[2])
    elif mode == "tiocsti":
        out = tiocsti()
    elif mode == "x32":
        out = x32_getpid()
    elif mode == "int80":
        out = int80_getpid()
    else:
        print(f"unknown mode {mode!r}", file=sys.stderr)
        return 2
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
