"""Runs INSIDE a jail for ``stockade doctor --deep``: carries out escape attempts, step by step.

Usage: python3 -I -S escapes.py SPEC.json
       python3 -I -S escapes.py --host-check SCRATCH_FILE   (unconfined: what the host can do)

The spec (written by ``stockade/doctor/battery.py``) lists attempts, each a list of steps
``[verb, arg, ...]`` with every path, port and token already filled in. This script *does*
things; it never decides whether an escape worked. The host judges every attempt from its own
side (a file that appeared, a listener that got a hit, an fd it can see in this process's fd
table, a process still alive). What this script reports per attempt is only whether each step
ran and the errno it got, which the doctor shows as detail and uses to tell an attempt that
could not run (``error``) from one that ran.

Phases, in order:

  now    steps run and finish (writes, reads copied to the exchange dir, connections, signals)
  hold   steps leave something open for the host to inspect: an fd placed at the slot number
         the host chose, a child process named ``sk-<tag>`` (unshare, PTRACE_TRACEME, a new
         session keyring), a ptrace attachment to a host process
  ...    this process writes one line to the ready FIFO, then waits until the host opens the
         release FIFO for writing and closes it (the host inspects /proc in between)
  last   steps that must happen right before the command ends (processes that try to outlive
         the run)

Harmless by construction: kernel files are opened and closed, never written; everything else
this script can change is a sentinel the doctor created in its own temporary lab.

Standard library only, no import of stockade (the jail may not see the package).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import platform
import select
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

PAYLOAD = b"stockade-doctor escape attempt\n"
CONNECT_TIMEOUT = 3.0
STARTED_TIMEOUT = 10.0
IPPROTO_MPTCP = 262
MSG_FASTOPEN = 0x20000000
PR_SET_NAME = 15
PTRACE_TRACEME, PTRACE_SEIZE = 0, 0x4206
CLONE_NEWUSER = 0x10000000
KEYCTL_JOIN_SESSION_KEYRING = 1
UFFD_USER_MODE_ONLY = 1

try:  # the syscall numbers are the seccomp probe's table, plus a few of this script's own
    from stockade.sandbox.probes.syscalls import SYSCALL_NUMBERS
except ImportError:  # run by path inside a jail (-I -S): the probe sits next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from syscalls import SYSCALL_NUMBERS  # type: ignore[import-not-found,no-redef]

SYSCALLS: dict[str, dict[str, int]] = {
    "x86_64": {
        **SYSCALL_NUMBERS["x86_64"],
        "chmod": 90,
        "fchmodat2": 452,
        "pidfd_open": 434,
        "pidfd_send_signal": 424,
        "rt_sigqueueinfo": 129,
    },
    "aarch64": {
        **SYSCALL_NUMBERS["aarch64"],
        "fchmodat2": 452,
        "pidfd_open": 434,
        "pidfd_send_signal": 424,
        "rt_sigqueueinfo": 240,
    },
}

_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long


class Skipped(Exception):
    """A step that cannot even be tried here (say why); the host decides what that means."""


def _sys(name: str, *args: object) -> int:
    table = SYSCALLS.get(platform.machine(), {})
    if name not in table:
        raise Skipped(f"no {name} syscall on {platform.machine()}")
    ctypes.set_errno(0)
    result = _syscall(ctypes.c_long(table[name]), *args)
    if result == -1:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return int(result)


def _long(value: int) -> ctypes.c_long:
    return ctypes.c_long(value)


# --- the context every verb gets ----------------------------------------------------------------


class Context:
    def __init__(self, spec: dict[str, object]) -> None:
        self.spec = spec
        self.slot: int | None = None
        self.tag = ""
        self.mark = ""  # this attempt's own marker: every file it writes ends with it
        self.held: list[int] = []
        self.children: list[tuple[int, int]] = []  # (pid, result pipe read end)
        self.release_fd = -1
        self.checking = False  # --host-check: make and drop the object, hold nothing


def _place(ctx: Context, fd: int) -> str:
    """Put a freshly created fd at the slot the host chose, so the host can find it."""
    if ctx.checking:
        os.close(fd)
        return "OK"
    if ctx.slot is None:
        os.close(fd)
        raise Skipped("the spec gave this hold step no fd slot")
    os.dup2(fd, ctx.slot, inheritable=False)
    os.close(fd)
    ctx.held.append(ctx.slot)
    return f"holding fd {ctx.slot}"


# --- file system ----------------------------------------------------------------------------------


def _marked(ctx: Context, text: str) -> str:
    """What an attempt writes always carries its marker, so the host can tell the jail's
    bytes from any change stockade itself makes."""
    return f"{text}\n# {ctx.mark}\n"


def write(ctx: Context, path: str, text: str = "stockade-doctor was here") -> str:
    with open(path, "w") as handle:
        handle.write(_marked(ctx, text))
    return "written"


def append(ctx: Context, path: str, text: str) -> str:
    with open(path, "a") as handle:
        handle.write(_marked(ctx, text))
    return "appended"


def overwrite_listed(ctx: Context, group: str) -> str:
    """Overwrite every file of a group the host listed (stockade's own state files)."""
    listed = ctx.spec["listed"][group]  # type: ignore[index]
    outcomes = []
    for path in listed:
        try:
            write(ctx, path, "stockade-doctor forged this")
            outcomes.append("written")
        except OSError as error:
            outcomes.append(errno.errorcode.get(error.errno or 0, "?"))
    return ", ".join(sorted(set(outcomes))) or "nothing listed"


def copy_listed(ctx: Context, group: str, target: str) -> str:
    listed = ctx.spec["listed"][group]  # type: ignore[index]
    copied = 0
    with open(target, "wb") as out:
        for path in listed:
            with contextlib.suppress(OSError), open(path, "rb") as handle:
                out.write(handle.read(1 << 16) + b"\n")
                copied += 1
    return f"read {copied} of {len(listed)} files"


def mkdir(ctx: Context, path: str) -> str:
    os.makedirs(path, exist_ok=True)
    return "created"


def rename(ctx: Context, source: str, target: str) -> str:
    os.rename(source, target)
    return "renamed"


def link(ctx: Context, source: str, target: str) -> str:
    os.link(source, target)
    return "linked"


def symlink(ctx: Context, target: str, path: str) -> str:
    os.symlink(target, path)
    return "symlinked"


def unlink(ctx: Context, path: str) -> str:
    os.unlink(path)
    return "removed"


def truncate(ctx: Context, path: str) -> str:
    os.truncate(path, 0)
    return "truncated"


def mkfifo(ctx: Context, path: str) -> str:
    os.mkfifo(path)
    return "created"


def copy(ctx: Context, source: str, target: str) -> str:
    """Read what the jail can of ``source`` and drop it where the host looks (exfiltration)."""
    with open(source, "rb") as handle:
        data = handle.read(1 << 20)
    with open(target, "wb") as out:
        out.write(data)
    return f"copied {len(data)} bytes"


def listing(ctx: Context, directory: str, target: str) -> str:
    names = sorted(os.listdir(directory))
    with open(target, "w") as out:
        json.dump(names, out)
    return f"listed {len(names)} names"


def create_with_mode(ctx: Context, path: str, mode: str, source: str) -> str:
    with open(source, "rb") as handle:
        content = handle.read()
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, int(mode, 8))
    try:
        os.write(fd, content)
    finally:
        os.close(fd)
    return "created"


def chmod(ctx: Context, path: str, mode: str) -> str:
    os.chmod(path, int(mode, 8))
    return "mode set"


def fchmod(ctx: Context, path: str, mode: str) -> str:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fchmod(fd, int(mode, 8))
    finally:
        os.close(fd)
    return "mode set"


def chmod_syscall(ctx: Context, path: str, mode: str) -> str:
    _sys("chmod", ctypes.c_char_p(path.encode()), _long(int(mode, 8)))
    return "mode set"


def fchmodat2(ctx: Context, path: str, mode: str) -> str:
    at_fdcwd = -100
    _sys(
        "fchmodat2", _long(at_fdcwd), ctypes.c_char_p(path.encode()), _long(int(mode, 8)), _long(0)
    )
    return "mode set"


def utime(ctx: Context, path: str) -> str:
    os.utime(path, (1_000_000_000, 1_000_000_000))
    return "times set"


def setxattr(ctx: Context, path: str, name: str, value: str) -> str:
    data = bytes.fromhex(value[4:]) if value.startswith("hex:") else value.encode()
    os.setxattr(path, name, data)
    return "attribute set"


def chown_self(ctx: Context, path: str) -> str:
    os.chown(path, os.getuid(), os.getgid())
    return "owner set"


def mknod_char(ctx: Context, path: str) -> str:
    import stat

    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return "device node created"


def open_by_handle(
    ctx: Context, mount_path: str, handle_type: str, handle_hex: str, target: str
) -> str:
    """The 'shocker' escape: open a file by its handle, bypassing every path on the way."""
    raw = bytes.fromhex(handle_hex)
    buffer = ctypes.create_string_buffer(struct.pack("Ii", len(raw), int(handle_type)) + raw)
    mount_fd = os.open(mount_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fd = _sys("open_by_handle_at", _long(mount_fd), buffer, _long(os.O_RDONLY))
    finally:
        os.close(mount_fd)
    with os.fdopen(fd, "rb") as handle, open(target, "wb") as out:
        out.write(handle.read(1 << 20))
    return "opened by handle"


def git_repository(ctx: Context, directory: str, config: str, hook: str) -> str:
    """A repository created inside the jail (what `git init` makes), with config and a hook."""
    git = os.path.join(directory, ".git")
    for part in ("objects", "refs/heads", "hooks"):
        os.makedirs(os.path.join(git, part), exist_ok=True)
    with open(os.path.join(git, "HEAD"), "w") as handle:
        handle.write("ref: refs/heads/main\n")
    with open(os.path.join(git, "config"), "w") as handle:
        handle.write(config)
    if hook:
        path = os.path.join(git, "hooks", hook)
        with open(path, "w") as handle:
            handle.write("#!/bin/sh\nexit 0\n")
        os.chmod(path, 0o755)
    return "repository created"


# --- holding things open for the host to look at --------------------------------------------------


def hold_open(ctx: Context, path: str, access: str) -> str:
    flags = {"read": os.O_RDONLY, "write": os.O_WRONLY}[access]
    return _place(ctx, os.open(path, flags | os.O_NOCTTY | os.O_NONBLOCK))


def hold_io_uring(ctx: Context) -> str:
    params = ctypes.create_string_buffer(120)  # struct io_uring_params, zeroed
    return _place(ctx, _sys("io_uring_setup", _long(1), params))


def hold_userfaultfd(ctx: Context) -> str:
    return _place(ctx, _sys("userfaultfd", _long(os.O_CLOEXEC | UFFD_USER_MODE_ONLY)))


def hold_perf_event(ctx: Context) -> str:
    # perf_event_attr (ABI version 0, 64 bytes): software CPU clock of this process, user only.
    flags = 1 | (1 << 5) | (1 << 6)  # disabled, exclude_kernel, exclude_hv
    attr = ctypes.create_string_buffer(struct.pack("IIQQQQQIIQ", 1, 64, 0, 0, 0, 0, flags, 0, 0, 0))
    return _place(ctx, _sys("perf_event_open", attr, _long(0), _long(-1), _long(-1), _long(0)))


def hold_bpf_map(ctx: Context) -> str:
    attr = ctypes.create_string_buffer(struct.pack("IIII", 2, 4, 4, 1) + bytes(56))  # ARRAY map
    return _place(ctx, _sys("bpf", _long(0), attr, _long(72)))


def hold_unix_socket(ctx: Context) -> str:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    return _place(ctx, sock.detach())


def hold_ptrace_seize(ctx: Context, pid: str) -> str:
    _sys("ptrace", _long(PTRACE_SEIZE), _long(int(pid)), _long(0), _long(0))
    return "seized"


def hold_child(ctx: Context, action: str) -> str:
    """Fork a child named ``sk-<tag>`` that tries ``action`` on itself and then waits for the
    release; the host inspects it (its namespaces, its tracer, the kernel's key list)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into the runner
        code = "OK"
        try:
            os.close(read_end)
            _let_go_of_output()
            _libc.prctl(PR_SET_NAME, ctypes.c_char_p(f"sk-{ctx.tag}".encode()), 0, 0, 0)
            _CHILD_ACTIONS[action](ctx)
        except OSError as error:
            code = errno.errorcode.get(error.errno or 0, str(error))
        except Exception as error:  # reported to the parent, never raised
            code = f"error: {type(error).__name__}: {error}"
        with contextlib.suppress(OSError):
            os.write(write_end, code.encode())
            os.close(write_end)
        _wait_for_release(ctx)
        os._exit(0)
    os.close(write_end)
    ctx.children.append((pid, read_end))
    result = os.read(read_end, 200).decode(errors="replace")
    if result != "OK":
        if result.startswith("error: "):
            raise RuntimeError(result[7:])
        raise OSError(getattr(errno, result, 0) or errno.EIO, result)
    return f"child sk-{ctx.tag} holding"


def _let_go_of_output() -> None:
    """A holding child must not keep the run's output pipes open (the run would wait)."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def _unshare_user(ctx: Context) -> None:
    _sys("unshare", _long(CLONE_NEWUSER))


def _traceme(ctx: Context) -> None:
    _sys("ptrace", _long(PTRACE_TRACEME), _long(0), _long(0), _long(0))


def _join_keyring(ctx: Context) -> None:
    name = ctypes.c_char_p(str(ctx.spec["keyring_prefix"]).encode() + ctx.tag.encode())
    _sys("keyctl", _long(KEYCTL_JOIN_SESSION_KEYRING), name)


_CHILD_ACTIONS = {"unshare-user": _unshare_user, "traceme": _traceme, "keyring": _join_keyring}


def hold_clone_newuser(ctx: Context) -> str:
    """clone(CLONE_NEWUSER) directly (not via unshare): the child holds like hold_child's."""
    read_end, write_end = os.pipe()
    pid = _sys(
        "clone", _long(CLONE_NEWUSER | signal.SIGCHLD), _long(0), _long(0), _long(0), _long(0)
    )
    if pid == 0:
        os.close(read_end)
        _let_go_of_output()
        _libc.prctl(PR_SET_NAME, ctypes.c_char_p(f"sk-{ctx.tag}".encode()), 0, 0, 0)
        os.write(write_end, b"OK")
        _wait_for_release(ctx)
        os._exit(0)
    os.close(write_end)
    ctx.children.append((pid, read_end))
    os.read(read_end, 10)
    return f"child sk-{ctx.tag} holding"


# --- processes and signals ------------------------------------------------------------------------


def scan_cmdlines(ctx: Context, prefix: str, target: str) -> str:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        with contextlib.suppress(OSError), open(f"/proc/{name}/cmdline", "rb") as handle:
            data = handle.read()
            if prefix.encode() in data:
                found.append(data.replace(b"\0", b" ").decode(errors="replace"))
    with open(target, "w") as out:
        json.dump(found, out)
    return f"{len(found)} matching processes"


def scan_environs(ctx: Context, target: str) -> str:
    """Every environment this process can read in /proc (a launcher's, a host process's)."""
    chunks, own = [], str(os.getpid())
    for name in os.listdir("/proc"):
        if name.isdigit() and name != own:  # its own environment is the other attempts' case
            with contextlib.suppress(OSError), open(f"/proc/{name}/environ", "rb") as handle:
                chunks.append(handle.read(1 << 16))
    with open(target, "wb") as out:
        out.write(b"\n".join(chunks))
    return f"read {len(chunks)} environments"


def dump_environment(ctx: Context, target: str) -> str:
    with open(target, "w") as out:
        json.dump(dict(os.environ), out)
    return f"{len(os.environ)} variables"


def send_signal(ctx: Context, how: str, pid: str, signum: str) -> str:
    number, target = int(signum), int(pid)
    if how == "kill":
        os.kill(target, number)
    elif how == "killpg":
        os.killpg(target, number)
    elif how == "pidfd":
        fd = _sys("pidfd_open", _long(target), _long(0))
        try:
            _sys("pidfd_send_signal", _long(fd), _long(number), None, _long(0))
        finally:
            os.close(fd)
    elif how == "sigqueue":
        info = ctypes.create_string_buffer(
            struct.pack("iii", number, 0, -1) + bytes(116)
        )  # SI_QUEUE
        _sys("rt_sigqueueinfo", _long(target), _long(number), info)
    else:
        raise ValueError(how)
    return "sent"


def vm_read(ctx: Context, pid: str, address: str, length: str, target: str) -> str:
    size = int(length)
    buffer = ctypes.create_string_buffer(size)
    local = struct.pack("PN", ctypes.addressof(buffer), size)
    remote = struct.pack("PN", int(address), size)
    local_iov, remote_iov = ctypes.create_string_buffer(local), ctypes.create_string_buffer(remote)
    count = _sys(
        "process_vm_readv", _long(int(pid)), local_iov, _long(1), remote_iov, _long(1), _long(0)
    )
    with open(target, "wb") as out:
        out.write(buffer.raw[:count])
    return f"read {count} bytes"


def mem_read(ctx: Context, pid: str, address: str, length: str, target: str) -> str:
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as handle:
        handle.seek(int(address))
        data = handle.read(int(length))
    with open(target, "wb") as out:
        out.write(data)
    return f"read {len(data)} bytes"


# --- terminals ----------------------------------------------------------------------------------


def write_terminal(ctx: Context, path: str, marker: str) -> str:
    fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK)
    try:
        os.write(fd, marker.encode() + b"\r\n")
    finally:
        os.close(fd)
    return "written"


def hold_every_pts(ctx: Context, first_slot: str) -> str:
    """Open every terminal in /dev/pts for writing (writes nothing); slots from first_slot on."""
    slot, opened = int(first_slot), 0
    for name in sorted(os.listdir("/dev/pts")):
        if not name.isdigit():
            continue
        try:
            fd = os.open(f"/dev/pts/{name}", os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError:
            continue
        os.dup2(fd, slot, inheritable=False)
        os.close(fd)
        ctx.held.append(slot)
        slot, opened = slot + 1, opened + 1
    if not opened:
        raise OSError(errno.EACCES, "no terminal in /dev/pts could be opened for writing")
    return f"holding {opened} terminals"


# --- network ------------------------------------------------------------------------------------


def _family(host: str) -> int:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def tcp(ctx: Context, host: str, port: str, protocol: str = "tcp") -> str:
    proto = IPPROTO_MPTCP if protocol == "mptcp" else 0
    with socket.socket(_family(host), socket.SOCK_STREAM, proto) as sock:
        sock.settimeout(CONNECT_TIMEOUT)
        if protocol == "fastopen":
            sock.sendto(PAYLOAD, MSG_FASTOPEN, (host, int(port)))
        else:
            sock.connect((host, int(port)))
            sock.sendall(PAYLOAD)
        with contextlib.suppress(OSError):
            sock.recv(64)
    return "connected"


def udp(ctx: Context, host: str, port: str) -> str:
    with socket.socket(_family(host), socket.SOCK_DGRAM) as sock:
        sock.sendto(PAYLOAD, (host, int(port)))
    return "sent"


def unix(ctx: Context, kind: str, address: str) -> str:
    sock_type = socket.SOCK_DGRAM if kind == "dgram" else socket.SOCK_STREAM
    target = "\0" + address if kind == "abstract" else address
    with socket.socket(socket.AF_UNIX, sock_type) as sock:
        sock.settimeout(CONNECT_TIMEOUT)
        if sock_type == socket.SOCK_DGRAM:
            sock.sendto(PAYLOAD, target)
        else:
            sock.connect(target)
            sock.sendall(PAYLOAD)
    return "connected"


def _proxy_address() -> tuple[str, int] | None:
    value = os.environ.get("HTTP_PROXY") or os.environ.get("http_proxy")
    if not value:
        return None
    host_port = value.split("://", 1)[-1].rstrip("/")
    host, _, port = host_port.rpartition(":")
    return host, int(port)


def _direct(ctx: Context, host: str, port: int) -> socket.socket:
    """No proxy configured (the doctor's unconfined self-test): go where the request names."""
    names = ctx.spec.get("hosts", {})
    assert isinstance(names, dict)
    address = names.get(host.rstrip(".").lower(), host.strip("[]"))
    return socket.create_connection((address, port), timeout=CONNECT_TIMEOUT)


def _read_reply(sock: socket.socket) -> bytes:
    sock.settimeout(CONNECT_TIMEOUT)
    with contextlib.suppress(OSError):
        return sock.recv(4096)
    return b""


def _status(reply: bytes) -> str:
    first = reply.split(b"\r\n", 1)[0].decode(errors="replace")
    return first or "no answer"


def proxy_http(ctx: Context, url: str, host_header: str = "") -> str:
    """An absolute-form request through the allow-list proxy (``Host`` may disagree)."""
    authority = url.split("://", 1)[1].split("/", 1)[0]
    header = host_header or authority.rsplit("@", 1)[-1]
    return _http(ctx, f"GET {url} HTTP/1.1\r\nHost: {header}\r\nConnection: close\r\n\r\n", header)


def proxy_origin_form(ctx: Context, host_header: str) -> str:
    """``GET /`` with only a Host header, sent to the proxy port (transparent-proxy style)."""
    request = f"GET / HTTP/1.1\r\nHost: {host_header}\r\nConnection: close\r\n\r\n"
    return _http(ctx, request, host_header)


def _http(ctx: Context, request: str, host_header: str) -> str:
    """Send ``request`` to the proxy the environment names; with none (the unconfined
    self-test), where the Host header says, as a naive proxy would."""
    proxy = _proxy_address()
    if proxy is None:
        host, _, port = host_header.rpartition(":")
        sock = _direct(ctx, host, int(port))
    else:
        sock = socket.create_connection(proxy, timeout=CONNECT_TIMEOUT)
    with sock:
        sock.sendall(request.encode())
        return _status(_read_reply(sock))


def proxy_connect(ctx: Context, target: str) -> str:
    proxy = _proxy_address()
    if proxy is None:
        host, _, port = target.rpartition(":")
        with _direct(ctx, host, int(port)) as sock:
            sock.sendall(PAYLOAD)
        return "connected directly (no proxy configured)"
    with socket.create_connection(proxy, timeout=CONNECT_TIMEOUT) as sock:
        sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
        reply = _read_reply(sock)
        if b" 200" in reply.split(b"\r\n", 1)[0]:
            sock.sendall(PAYLOAD)
            _read_reply(sock)
        return _status(reply)


def proxy_socks(ctx: Context, version: str, host: str, port: str) -> str:
    proxy = _proxy_address()
    if proxy is None:
        with _direct(ctx, host, int(port)) as sock:
            sock.sendall(PAYLOAD)
        return "connected directly (no proxy configured)"
    with socket.create_connection(proxy, timeout=CONNECT_TIMEOUT) as sock:
        if version == "4":
            packed = socket.inet_aton(host)
            sock.sendall(b"\x04\x01" + struct.pack(">H", int(port)) + packed + b"doctor\x00")
            reply = _read_reply(sock)
            granted = reply[1:2] == b"\x5a"
        else:
            sock.sendall(b"\x05\x01\x00")
            if _read_reply(sock)[:2] != b"\x05\x00":
                return "no SOCKS5 method accepted"
            try:
                address = b"\x01" + socket.inet_aton(host)
            except OSError:
                address = b"\x03" + bytes([len(host)]) + host.encode()
            sock.sendall(b"\x05\x01\x00" + address + struct.pack(">H", int(port)))
            reply = _read_reply(sock)
            granted = reply[1:2] == b"\x00"
        if granted:
            sock.sendall(PAYLOAD)
            _read_reply(sock)
            return "granted"
        return f"refused ({reply[:2].hex()})"


def drive_bridge(ctx: Context, relay_socket: str, socket_path: str, bridge_port: str) -> str:
    """Make the in-jail relay (which may use AF_UNIX) connect somewhere else: rewrite the socket
    path it was given (``relay_socket``) in its memory through /proc/PID/mem to a same-length
    symlink to ``socket_path``, then ask it for a connection."""
    alias = "/tmp/" + "r" * (len(relay_socket) - len("/tmp/"))
    os.symlink(socket_path, alias)
    relays = [
        pid for pid in _children(os.getpid()) if b"bridge.py" in _read(f"/proc/{pid}/cmdline")
    ]
    if not relays:
        raise Skipped("no in-jail bridge process (this backend has none)")
    old, new = relay_socket.encode(), alias.encode()
    patched = sum(_patch_memory(pid, old, new) for pid in relays)
    if not patched:
        raise Skipped(f"{relay_socket} is not in the relay's memory (the bridge changed?)")
    with socket.create_connection(("127.0.0.1", int(bridge_port)), timeout=CONNECT_TIMEOUT) as sock:
        sock.sendall(b"GET http://stockade-doctor.test/ HTTP/1.0\r\n\r\n")
        _read_reply(sock)
    return f"patched {patched} copies of the socket path"


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def _children(parent: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            stat = _read(f"/proc/{name}/stat")
            if stat and int(stat[stat.rindex(b")") + 2 :].split()[1]) == parent:
                found.append(int(name))
    return found


def _patch_memory(pid: int, old: bytes, new: bytes) -> int:
    patched = 0
    with open(f"/proc/{pid}/mem", "r+b", buffering=0) as memory:
        for line in _read(f"/proc/{pid}/maps").decode().splitlines():
            fields = line.split()
            if len(fields) < 2 or not fields[1].startswith("rw"):
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            try:
                memory.seek(start)
                data = memory.read(end - start)
            except OSError:
                continue
            index = data.find(old)
            while index >= 0:
                memory.seek(start + index)
                memory.write(new)
                patched += 1
                index = data.find(old, index + 1)
    return patched


# --- processes that try to outlive the run --------------------------------------------------------

SURVIVOR = (
    "import os, sys, time\n"
    "with open(sys.argv[2], 'w') as f: f.write(str(os.getpid()))\n"
    "time.sleep(60)\n"
)


def survive(ctx: Context, mode: str, marker: str, started: str) -> str:
    argv = [sys.executable, "-I", "-S", "-c", SURVIVOR, marker, started]
    null = os.open(os.devnull, os.O_RDWR)
    if mode in ("background", "setsid", "new-group", "nohup"):

        def ignore_hangups() -> None:
            for number in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
                signal.signal(number, signal.SIG_IGN)

        subprocess.Popen(
            argv,
            stdin=null,
            stdout=null,
            stderr=null,
            start_new_session=mode == "setsid",
            process_group=0 if mode == "new-group" else None,
            preexec_fn=ignore_hangups if mode == "nohup" else None,
        )
    elif mode in ("double-fork", "daemon"):
        child = os.fork()
        if child == 0:
            try:
                if mode == "daemon":
                    os.setsid()
                if os.fork() == 0:
                    os.chdir("/")
                    for fd in (0, 1, 2):
                        os.dup2(null, fd)
                    os.execv(argv[0], argv)
            finally:
                os._exit(0)
        os.waitpid(child, 0)
    else:
        raise ValueError(mode)
    os.close(null)
    deadline = time.monotonic() + STARTED_TIMEOUT
    while not os.path.exists(started):  # wait for the condition: the survivor is running
        if time.monotonic() > deadline:
            raise RuntimeError("the process did not start within 10 s")
        time.sleep(0.01)
    return "started"


VERBS: dict[str, Callable[..., str]] = {
    "write": write,
    "append": append,
    "mkdir": mkdir,
    "rename": rename,
    "link": link,
    "symlink": symlink,
    "unlink": unlink,
    "truncate": truncate,
    "mkfifo": mkfifo,
    "copy": copy,
    "overwrite-listed": overwrite_listed,
    "copy-listed": copy_listed,
    "listing": listing,
    "create-with-mode": create_with_mode,
    "chmod": chmod,
    "fchmod": fchmod,
    "chmod-syscall": chmod_syscall,
    "fchmodat2": fchmodat2,
    "utime": utime,
    "setxattr": setxattr,
    "chown-self": chown_self,
    "mknod-char": mknod_char,
    "open-by-handle": open_by_handle,
    "git-repository": git_repository,
    "hold-open": hold_open,
    "hold-io-uring": hold_io_uring,
    "hold-userfaultfd": hold_userfaultfd,
    "hold-perf-event": hold_perf_event,
    "hold-bpf-map": hold_bpf_map,
    "hold-unix-socket": hold_unix_socket,
    "hold-ptrace-seize": hold_ptrace_seize,
    "hold-child": hold_child,
    "hold-clone-newuser": hold_clone_newuser,
    "hold-every-pts": hold_every_pts,
    "scan-cmdlines": scan_cmdlines,
    "scan-environs": scan_environs,
    "dump-environment": dump_environment,
    "signal": send_signal,
    "vm-read": vm_read,
    "mem-read": mem_read,
    "write-terminal": write_terminal,
    "tcp": tcp,
    "udp": udp,
    "unix": unix,
    "proxy-http": proxy_http,
    "proxy-origin-form": proxy_origin_form,
    "proxy-connect": proxy_connect,
    "proxy-socks": proxy_socks,
    "drive-bridge": drive_bridge,
    "survive": survive,
}


# --- the runner ---------------------------------------------------------------------------------


def run_attempt(ctx: Context, attempt: dict[str, object]) -> dict[str, object]:
    """Run every step of one attempt; a failed step does not stop the next (each is a try)."""
    ctx.slot = attempt.get("slot")  # type: ignore[assignment]
    ctx.tag = str(attempt.get("tag", ""))
    ctx.mark = str(attempt.get("mark", ""))
    results: list[str] = []
    for step in attempt["steps"]:  # type: ignore[attr-defined]
        verb, *args = step
        try:
            results.append(VERBS[verb](ctx, *args))
        except OSError as error:
            results.append(errno.errorcode.get(error.errno or 0, str(error)))
        except Skipped as skipped:
            results.append(f"skipped: {skipped}")
        except Exception as error:  # the attempt itself failed to run
            return {
                "ran": False,
                "steps": results,
                "error": f"{verb}: {type(error).__name__}: {error}",
            }
    return {"ran": True, "steps": results}


def _wait_for_release(ctx: Context) -> None:
    """Block until the host opens the release FIFO for writing and closes it (POLLHUP)."""
    if ctx.release_fd < 0:
        return
    poller = select.poll()
    poller.register(ctx.release_fd, select.POLLIN | select.POLLHUP)
    poller.poll()


#: ``--host-check``: can the host itself do what the seccomp attempts try? (Else the attempt
#: proves nothing here and is not applicable.) Each entry is a step like the attempts'.
HOST_CHECKS: dict[str, tuple[str, ...]] = {
    "io_uring": ("hold-io-uring",),
    "userfaultfd": ("hold-userfaultfd",),
    "perf_event": ("hold-perf-event",),
    "bpf": ("hold-bpf-map",),
    "userns": ("hold-child", "unshare-user"),
    "keyring": ("hold-child", "keyring"),
    "fchmodat2": ("fchmodat2", "", "600"),
}


def host_check(scratch: str) -> dict[str, str | None]:
    """Run every HOST_CHECKS step unconfined; None where it worked, else why not."""
    ctx = Context({"keyring_prefix": "stockade-doctor-check-"})
    ctx.checking, ctx.tag = True, "check"
    results: dict[str, str | None] = {}
    for name, (verb, *args) in HOST_CHECKS.items():
        if verb == "fchmodat2":
            args = [scratch, *args[1:]]
        try:
            VERBS[verb](ctx, *args)
            results[name] = None
        except OSError as error:
            results[name] = errno.errorcode.get(error.errno or 0, str(error))
        except Exception as error:
            results[name] = f"{type(error).__name__}: {error}"
    for pid, pipe in ctx.children:
        with contextlib.suppress(OSError):
            os.close(pipe)
            os.waitpid(pid, 0)
    return results


def _write_report(spec: dict[str, object], report: dict[str, object]) -> str:
    text = json.dumps(report)
    with open(str(spec["report"]), "w") as out:
        out.write(text)
    return text


def main() -> int:
    if sys.argv[1] == "--host-check":
        print(json.dumps(host_check(sys.argv[2])), flush=True)
        return 0
    with open(sys.argv[1]) as handle:
        spec = json.load(handle)
    ctx = Context(spec)
    try:
        return _run(ctx, spec)
    finally:  # whatever happened, no holding child outlives this process
        for pid, _ in ctx.children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _run(ctx: Context, spec: dict[str, Any]) -> int:
    _libc.prctl(PR_SET_NAME, ctypes.c_char_p(b"sk-main"), 0, 0, 0)
    ctx.release_fd = os.open(spec["release_fifo"], os.O_RDONLY | os.O_NONBLOCK)
    report: dict[str, object] = {}
    phases = {
        phase: [a for a in spec["attempts"] if a["phase"] == phase]
        for phase in ("now", "hold", "last")
    }
    for attempt in phases["now"] + phases["hold"]:
        report[attempt["name"]] = run_attempt(ctx, attempt)
    _write_report(spec, report)  # so far: what ran is known even if a later step crashes
    fd = os.open(spec["ready_fifo"], os.O_WRONLY)
    os.write(fd, b"ready\n")
    os.close(fd)
    _wait_for_release(ctx)
    for slot in ctx.held:
        with contextlib.suppress(OSError):
            os.close(slot)
    for pid, pipe in ctx.children:
        with contextlib.suppress(OSError):
            os.close(pipe)
            os.waitpid(pid, 0)
    ctx.children.clear()
    for attempt in phases["last"]:
        report[attempt["name"]] = run_attempt(ctx, attempt)
    print(_write_report(spec, report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
