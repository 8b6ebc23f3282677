"""The Landlock backend against an attacker's checklist (issue 19), judged from the host side:
a listener that got no connection, a file whose stat did not change, a terminal that received
nothing, a pid that no longer exists. Where the attack itself might not work on this machine,
an unconfined control run (backend ``none``) shows it does, so a pass means something.

Run as root and as an unprivileged user (the file needs nothing but a Landlock kernel). The
runs use limits without cgroup caps: as root a cgroup would otherwise end leftover processes
and hide whether the backend itself does.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stockade.runner import RunResult, Sandbox, run
from stockade.sandbox import landlock
from stockade.sandbox.limits import Limits
from stockade.sandbox.policy import NetworkMode
from tests.integration.test_cli_permissions import Terminal

ABI = landlock.abi_version()
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(ABI < 1, reason="Landlock is not available on this kernel"),
]
NO_CGROUP = Limits(memory_max_bytes=None, pids_max=None)  # nothing else ends leftovers
IPPROTO_MPTCP = 262
IPPROTO_SCTP = 132


def wait_for(condition: Callable[[], bool], timeout: float = 15.0) -> bool:
    """Poll `condition` until it holds (never a fixed wait for something to happen)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def python(code: str, *, backend: str = "landlock") -> RunResult:
    return run(["/usr/bin/python3", "-c", textwrap.dedent(code)], backend=backend, limits=NO_CGROUP)


# --------------------------------------------------------------------------------- sockets


class Listener:
    """A host loopback TCP listener that records every connection it accepts."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_TCP, socket.TCP_FASTOPEN, 16)
        self.server.bind((host, port))
        self.server.listen(16)
        self.server.settimeout(0.1)
        self.port = self.server.getsockname()[1]
        self.connections: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.connections.append(conn.recv(100) or b"<connected>")
                except OSError:
                    self.connections.append(b"<connected>")

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.server.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


ATTACKS = """
import socket, sys
port = int(sys.argv[1])
def attempt(name, make, go):
    try:
        s = make()
        go(s)
        print(name, "sent", flush=True)
    except OSError as e:
        print(name, "refused", e.errno, flush=True)
attempt("mptcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262),
        lambda s: (s.connect(("127.0.0.1", port)), s.sendall(b"mptcp")))
attempt("mptcp6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM, 262),
        lambda s: (s.connect(("::ffff:127.0.0.1", port)), s.sendall(b"mptcp6")))
attempt("sctp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132),
        lambda s: (s.connect(("127.0.0.1", port)), s.sendall(b"sctp")))
attempt("fastopen", lambda: socket.socket(),
        lambda s: s.sendto(b"fastopen", socket.MSG_FASTOPEN, ("127.0.0.1", port)))
attempt("tcp", lambda: socket.socket(),
        lambda s: (s.connect(("127.0.0.1", port)), s.sendall(b"tcp")))
"""


def attack(port: int, backend: str, network: NetworkMode = NetworkMode.DENY) -> str:
    result = run(
        ["/usr/bin/python3", "-c", ATTACKS, str(port)],
        backend=backend,
        network=network,
        limits=NO_CGROUP,
    )
    return result.stdout + result.stderr


needs_tcp_rules = pytest.mark.skipif(ABI < 4, reason="Landlock TCP rules need ABI 4")


@needs_tcp_rules
def test_other_stream_protocols_and_fast_open_never_reach_a_host_listener(
    project: Path, listener: Listener
) -> None:
    control = attack(listener.port, "none")
    assert wait_for(lambda: len(listener.connections) >= 3), control  # the attacks work here
    assert b"mptcp" in listener.connections and b"fastopen" in listener.connections
    listener.connections.clear()

    said = attack(listener.port, "landlock")
    for name in ("mptcp", "mptcp6", "sctp", "fastopen"):
        assert f"{name} refused {errno.EPERM}" in said, said
    assert f"tcp refused {errno.EACCES}" in said, said  # plain TCP: Landlock itself
    time.sleep(0)  # let the accept loop run once more before judging
    assert listener.connections == [], "a jailed process reached the host listener"


@needs_tcp_rules
def test_the_allow_list_proxy_port_is_reachable_by_tcp_only(
    project: Path, listener: Listener
) -> None:
    """With the network allow-listed the proxy's port is open to TCP; the other protocols and
    Fast Open still are not (they would skip Landlock's port rule just the same)."""
    with Sandbox.for_project(project, network=NetworkMode.ALLOWLIST, backend="landlock") as box:
        box.policy = box.policy._replace(proxy_port=listener.port)
        result = box.run(["/usr/bin/python3", "-c", ATTACKS, str(listener.port)])
    said = result.stdout + result.stderr
    assert "tcp sent" in said and "mptcp refused" in said and "fastopen refused" in said, said
    assert wait_for(lambda: listener.connections == [b"tcp"]), listener.connections


@pytest.mark.skipif(not os.path.exists("/usr/bin/bwrap"), reason="bubblewrap is not installed")
def test_bwrap_refuses_the_same_protocols_even_with_the_network_allowed(
    project: Path, listener: Listener
) -> None:
    said = attack(listener.port, "bwrap", NetworkMode.ALLOW)
    for name in ("mptcp", "mptcp6", "sctp"):
        assert f"{name} refused {errno.EPERM}" in said, said
    assert wait_for(lambda: sorted(listener.connections) == [b"fastopen", b"tcp"]), said


ANOTHER_HOST = """
import socket, sys
port = int(sys.argv[1])
for family, host in ((socket.AF_INET, "127.0.0.2"), (socket.AF_INET6, "::ffff:127.0.0.2")):
    s = socket.socket(family)
    try:
        s.connect((host, port))
        s.sendall(b"escaped")
        print(host, "connected")
    except OSError as e:
        print(host, "refused", e.errno)
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"CONNECT example.invalid:443 HTTP/1.1\\r\\nHost: example.invalid:443\\r\\n\\r\\n")
print("proxy says", s.recv(100).split(b"\\r\\n")[0].decode())
"""


@needs_tcp_rules
def test_with_the_allow_list_only_the_proxys_address_is_reachable_on_its_port(
    project: Path,
) -> None:
    """Landlock allows the proxy's port on every host; the supervisor allows one address."""
    with Sandbox.for_project(project, network=NetworkMode.ALLOWLIST, backend="landlock") as box:
        port = box.policy.proxy_port
        assert port is not None
        elsewhere = Listener(host="127.0.0.2", port=port)
        try:
            result = box.run(["/usr/bin/python3", "-c", ANOTHER_HOST, str(port)])
            said = result.stdout + result.stderr
            assert f"127.0.0.2 refused {errno.EACCES}" in said, said
            assert f"::ffff:127.0.0.2 refused {errno.EACCES}" in said, said
            assert "proxy says HTTP/1.1 403" in said, said  # the proxy itself: reachable
            assert elsewhere.connections == [], "another host on the proxy's port was reached"
        finally:
            elsewhere.close()


LISTEN = """
import socket, sys, time, pathlib
s = socket.socket()
try:
    s.listen(4)
    print("listening", s.getsockname()[1], flush=True)
except OSError as e:
    print("refused", e.errno, flush=True)
pathlib.Path(sys.argv[1]).write_text("tried")
time.sleep(120)
"""


def descendants(ancestor: int) -> set[int]:
    """Every host process below `ancestor` (parent links in /proc), for judging from outside."""
    parents = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError, IndexError), open(f"/proc/{entry}/stat") as status:
            parents[int(entry)] = int(status.read().rsplit(")", 1)[1].split()[1])
    found, grew = {ancestor}, True
    while grew:
        below = {pid for pid, parent in parents.items() if parent in found} - found
        found |= below
        grew = bool(below)
    return found - {ancestor}


def listening_ports(pids: set[int]) -> set[int]:
    """TCP ports in LISTEN state whose socket belongs to one of `pids` (from /proc)."""
    inodes = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    link = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if link.startswith("socket:["):
                        inodes.add(link[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


@needs_tcp_rules
@pytest.mark.parametrize("backend", ["none", "landlock"])
def test_listen_without_bind_opens_no_port(project: Path, backend: str) -> None:
    marker = project / "src" / "tried"
    marker.parent.mkdir()
    with Sandbox.for_project(project, backend=backend, limits=NO_CGROUP) as box:
        command = box.start(["/usr/bin/python3", "-c", LISTEN, str(marker)])
        assert wait_for(marker.exists)
        ports = listening_ports(descendants(command.pid) | {command.pid})
        output = command.read_new().stdout
        command.kill()
    if backend == "none":  # the control: listen() alone opens a port on every address
        assert ports, output
    else:
        assert ports == set(), f"the jail listens on {ports}: {output}"
        assert f"refused {errno.EPERM}" in output


# -------------------------------------------------------------------------------- metadata


def snapshot(path: Path) -> tuple[object, ...]:
    """Everything a metadata change would show: mode, owner, times (ctime catches even a
    no-op chown), and the extended attributes."""
    st = os.lstat(path)
    attrs = tuple(sorted(os.listxattr(path, follow_symlinks=False)))
    return (st.st_mode, st.st_uid, st.st_gid, st.st_mtime_ns, st.st_ctime_ns, attrs)


@pytest.fixture
def secrets(visible_dir: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A home with a masked private key, and host files outside every writable root."""
    home = visible_dir / "home"
    (home / ".ssh").mkdir(parents=True)
    key = home / ".ssh" / "id_ed25519"
    key.write_text("PRIVATE KEY\n")
    key.chmod(0o600)
    outside = visible_dir / "outside.txt"
    outside.write_text("host data\n")
    outside.chmod(0o600)
    directory = visible_dir / "outside-dir"
    directory.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return {"key": key, "file": outside, "dir": directory}


METADATA_ATTACKS = """
import os, sys
uid, gid = os.getuid(), os.getgid()
for target in sys.argv[1:]:
    attempts = {
        "chmod": lambda: os.chmod(target, 0o644),
        "chmod-proc": lambda: os.chmod(f"/proc/self/fd/{os.open(target, os.O_PATH)}", 0o666),
        "fchmod": lambda: os.fchmod(os.open(target, os.O_RDONLY), 0o640),
        "chown": lambda: os.chown(target, uid, gid),
        "lchown": lambda: os.lchown(target, uid, gid),
        "utime": lambda: os.utime(target, (1, 2)),
        "utime-now": lambda: os.utime(target),
        "futimens": lambda: os.utime(os.open(target, os.O_RDONLY), (3, 4)),
        "setxattr": lambda: os.setxattr(target, "user.stockade", b"x"),
        "fsetxattr": lambda: os.setxattr(os.open(target, os.O_RDONLY), "user.stockade", b"y"),
        "via-link": lambda: (os.symlink(target, "src/link"), os.chmod("src/link", 0o666)),
        "via-hardlink": lambda: (os.link(target, "src/link"), os.chmod("src/link", 0o666)),
        "chmod-at": lambda: os.chmod(
            os.path.basename(target), 0o660, dir_fd=os.open(os.path.dirname(target), os.O_PATH)
        ),
    }
    for name, attempt in attempts.items():
        try:
            attempt()
            print(name, target, "CHANGED")
        except OSError as e:
            print(name, target, "refused", e.errno)
        if os.path.lexists("src/link"):
            os.unlink("src/link")
"""


def test_metadata_outside_the_writable_roots_is_unchanged(
    project: Path, secrets: dict[str, Path]
) -> None:
    (project / "src").mkdir()
    targets = [str(p) for p in secrets.values()]
    before = {name: snapshot(path) for name, path in secrets.items()}
    control = run(
        ["/usr/bin/python3", "-c", METADATA_ATTACKS, *targets], backend="none", limits=NO_CGROUP
    )
    assert control.stdout.count("CHANGED") >= 30, control.stdout + control.stderr
    assert {name: snapshot(path) for name, path in secrets.items()} != before
    for path in secrets.values():  # back to the starting point
        with contextlib.suppress(OSError):
            os.removexattr(path, "user.stockade")
    secrets["key"].chmod(0o600)
    secrets["file"].chmod(0o600)
    before = {name: snapshot(path) for name, path in secrets.items()}

    result = run(
        ["/usr/bin/python3", "-c", METADATA_ATTACKS, *targets],
        backend="landlock",
        limits=NO_CGROUP,
    )
    assert "CHANGED" not in result.stdout, result.stdout
    assert result.stdout.count("refused") == 13 * len(targets), result.stdout + result.stderr
    assert {name: snapshot(path) for name, path in secrets.items()} == before
    assert stat.S_IMODE(secrets["key"].stat().st_mode) == 0o600


PROTECTED_ATTACKS = """
import os, sys
for target in sys.argv[1:]:
    for name, attempt in (
        ("chmod", lambda: os.chmod(target, 0o755)),
        ("utime", lambda: os.utime(target, (1, 2))),
        ("setxattr", lambda: os.setxattr(target, "user.stockade", b"x")),
    ):
        try:
            attempt()
            print(name, target, "CHANGED")
        except OSError as e:
            print(name, target, "refused", e.errno)
"""


def test_metadata_of_protected_paths_inside_a_root_is_unchanged(project: Path) -> None:
    """.git/hooks and .git/config lie inside the writable project, but are protected: making a
    hook executable is as good as writing one."""
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    targets = [project / ".git/hooks/pre-commit.sample", project / ".git/config"]
    before = [snapshot(path) for path in targets]
    result = run(
        ["/usr/bin/python3", "-c", PROTECTED_ATTACKS, *map(str, targets)],
        backend="landlock",
        limits=NO_CGROUP,
    )
    assert "CHANGED" not in result.stdout, result.stdout
    assert result.stdout.count(f"refused {errno.EPERM}") == 3 * len(targets), result.stdout
    assert [snapshot(path) for path in targets] == before


INSIDE = """
set -e
cd src
echo 'echo ran' > tool.sh && chmod +x tool.sh && ./tool.sh
touch -d 2001-02-03 dated
python3 -c "import os; os.setxattr('dated', 'user.kept', b'1')"
mkdir -p tree/sub && echo data > tree/sub/file && chmod 640 tree/sub/file
touch -d 2002-03-04 tree/sub/file
tar cf archive.tar tree && mkdir unpacked && tar xf archive.tar -C unpacked
cp -p tree/sub/file copied
ln -s tool.sh link && chmod 700 link
chmod u+s tool.sh 2>/dev/null && echo SETUID-ALLOWED || echo setuid-refused
"""


def test_metadata_inside_the_writable_roots_still_works(project: Path) -> None:
    src = project / "src"
    src.mkdir()
    result = run(["/bin/sh", "-c", INSIDE], backend="landlock", limits=NO_CGROUP)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "ran" in result.stdout and "setuid-refused" in result.stdout
    assert stat.S_IMODE((src / "tool.sh").stat().st_mode) == 0o700  # through the symlink
    assert (src / "dated").stat().st_mtime == time.mktime((2001, 2, 3, 0, 0, 0, 0, 0, -1))
    assert os.getxattr(src / "dated", "user.kept") == b"1"
    unpacked = src / "unpacked/tree/sub/file"
    for copy in (unpacked, src / "copied"):
        assert stat.S_IMODE(copy.stat().st_mode) == 0o640, copy
        assert copy.stat().st_mtime == (src / "tree/sub/file").stat().st_mtime, copy


def test_git_checkout_of_an_executable_under_landlock(project: Path) -> None:
    src = project / "src"
    subprocess.run(["git", "init", "-q", "-b", "main", str(src)], check=True)
    script = (
        "export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a "
        "GIT_COMMITTER_EMAIL=a@b; cd src && echo 'echo hi' > run.sh && chmod +x run.sh && "
        "git add run.sh && git commit -q -m one && git checkout -q -b other && "
        "chmod -x run.sh && git commit -q -am two && git checkout -q main && ./run.sh"
    )
    result = run(["/bin/sh", "-c", script], backend="landlock", limits=NO_CGROUP)
    if "Permission denied" in result.stderr and ".git" in result.stderr:
        pytest.skip("this branch keeps .git frozen under Landlock (protected paths)")
    assert result.exit_code == 0 and "hi" in result.stdout, result.stderr
    assert os.access(src / "run.sh", os.X_OK)


RACE = """
import ctypes, os, sys, threading, time
inside, outside = sys.argv[1].encode(), sys.argv[2].encode()
libc = ctypes.CDLL(None, use_errno=True)
buffer = ctypes.create_string_buffer(max(len(inside), len(outside)) + 1)
stop = time.monotonic() + 2
def flip():  # swap the path string under the supervisor's feet
    while time.monotonic() < stop:
        for value in (inside, outside):
            ctypes.memset(buffer, 0, len(buffer))
            ctypes.memmove(buffer, value, len(value))
def relink():  # and a symlink inside the root between an inside and an outside target
    while time.monotonic() < stop:
        for value in (inside, outside):
            try:
                os.symlink(value, b"src/race.new"); os.rename(b"src/race.new", b"src/race")
            except OSError:
                pass
threads = [threading.Thread(target=flip), threading.Thread(target=relink)]
for t in threads: t.start()
calls = 0
while time.monotonic() < stop:
    libc.chmod(buffer, 0o666)
    libc.chmod(b"src/race", 0o606)
    libc.utimensat(-100, b"src/race", None, 0)
    calls += 3
for t in threads: t.join()
print("calls", calls)
"""


def test_the_check_holds_while_the_path_and_a_symlink_are_swapped(
    project: Path, secrets: dict[str, Path]
) -> None:
    src = project / "src"
    src.mkdir()
    inside = src / "inside.txt"
    inside.write_text("mine\n")
    before = snapshot(secrets["file"])
    result = run(
        ["/usr/bin/python3", "-c", RACE, str(inside), str(secrets["file"])],
        backend="landlock",
        limits=NO_CGROUP,
    )
    assert "calls" in result.stdout, result.stderr
    assert int(result.stdout.split()[-1]) > 50
    assert snapshot(secrets["file"]) == before, "a swapped path let a change through"
    assert stat.S_IMODE(inside.stat().st_mode) in (0o666, 0o606)  # the allowed side did work


SUPERVISED_LATER = """
import os, pathlib, sys, time
project = pathlib.Path(sys.argv[1])
(project / "src/pid").write_text(str(os.getpid()))
while not (project / "src/go").exists():
    time.sleep(0.01)
try:
    os.chmod(project / "src/victim", 0o777)
    outcome = "changed"
except OSError as e:
    outcome = f"refused {e.errno}"
(project / "src/outcome").write_text(outcome)
"""


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_without_its_supervisor_the_jail_fails_closed(project: Path, warm: bool) -> None:
    src = project / "src"
    src.mkdir()
    victim = src / "victim"
    victim.write_text("x")
    victim.chmod(0o600)
    with Sandbox.for_project(project, backend="landlock", limits=NO_CGROUP, warm=warm) as box:
        command = box.start(["/usr/bin/python3", "-c", SUPERVISED_LATER, str(project)])
        pid_file = src / "pid"  # (created before it is written: wait for its content)
        assert wait_for(lambda: pid_file.exists() and pid_file.read_text() != "")
        jailed = int(pid_file.read_text())
        # the launcher, and with it the supervisor (warm: the jail's, above its spawner)
        launcher = command.pid
        if command.warm:
            assert box._warm is not None
            (jail,) = box._warm.jails()
            launcher = jail.started.process.pid  # type: ignore[attr-defined]
        try:
            os.kill(launcher, signal.SIGKILL)
            (src / "go").touch()
            assert wait_for((src / "outcome").exists)
            assert (src / "outcome").read_text() == f"refused {errno.ENOSYS}"
            assert stat.S_IMODE(victim.stat().st_mode) == 0o600
        finally:
            command.kill()  # the launcher is gone: its process group is ended directly
        if not command.warm:  # (warm: its monitor, still there, reported how it ended)
            assert command.exit_code == 128 + signal.SIGKILL
        assert wait_for(lambda: not alive(jailed))


# ------------------------------------------------------------------------------- terminals

TERMINALS = """
import glob, os
for path in sorted(glob.glob("/dev/pts/*")) + ["/dev/ptmx", "/dev/console"]:
    for mode, flags in (("write", os.O_WRONLY), ("read", os.O_RDONLY)):
        try:
            fd = os.open(path, flags | os.O_NOCTTY | os.O_NONBLOCK)
            if mode == "write":
                os.write(fd, b"INJECTED\\n")
            print(path, mode, "OPENED")
            os.close(fd)
        except OSError as e:
            print(path, mode, "refused", e.errno)
"""


def drain(controller: int) -> bytes:
    seen = b""
    while select.select([controller], [], [], 0)[0]:
        try:
            chunk = os.read(controller, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    return seen


def test_other_terminals_receive_nothing(project: Path) -> None:
    controller, terminal = os.openpty()
    try:
        path = os.ttyname(terminal)
        control = python(TERMINALS, backend="none")
        assert f"{path} write OPENED" in control.stdout, control.stdout
        assert wait_for(lambda: b"INJECTED" in drain(controller)), "the control wrote nothing"

        result = python(TERMINALS)
        assert f"{path} write refused {errno.EACCES}" in result.stdout, result.stdout
        assert f"{path} read refused {errno.EACCES}" in result.stdout, result.stdout
        assert "OPENED" not in result.stdout.replace("/dev/ptmx read", ""), result.stdout
        assert drain(controller) == b"", "the jail wrote into another terminal"
    finally:
        os.close(terminal)
        os.close(controller)


def test_an_interactive_shell_keeps_its_terminal(project: Path) -> None:
    shell = Terminal(
        "run", "--backend", "landlock", "--", "bash", "--norc", "--noprofile", "-i", cwd=project
    )
    try:
        shell.expect("bash-")  # the prompt
        shell.press(b"echo $((6*7)) answer; echo via-dev > /dev/stdout; tty\n")
        # tty's answer comes after the other two lines (bash may echo the typed line before
        # or after running it, depending on when readline took the terminal over)
        screen = shell.expect("/dev/pts/")
        assert "42 answer\r\n" in screen and "via-dev\r\n" in screen, screen
        assert "ermission denied" not in screen, screen
        shell.press(b"exit 3\n")
        assert shell.finish() == 3, shell.seen
    finally:
        shell.process.kill()


# ------------------------------------------------------------------------------- processes

LEAVE_BEHIND = """
setsid sleep 4300.1 < /dev/null > /dev/null 2>&1 &
echo $! > src/pids
( nohup sleep 4300.2 < /dev/null > /dev/null 2>&1 & echo $! >> src/pids )
python3 -c 'import os, sys
if os.fork(): sys.exit(0)
os.setsid()
if os.fork(): sys.exit(0)
open("src/pids", "a").write(f"{os.getpid()}\\n")
os.execvp("sleep", ["sleep", "4300.3"])' < /dev/null > /dev/null 2>&1
while [ $(wc -l < src/pids) -lt 3 ]; do sleep 0.01; done
"""


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as status:
            return status.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kill_quietly(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("backend", ["landlock", "none"])
def test_no_process_outlives_the_run(project: Path, backend: str) -> None:
    (project / "src").mkdir()
    result = run(["/bin/sh", "-c", LEAVE_BEHIND], backend=backend, limits=NO_CGROUP)
    pids = [int(p) for p in (project / "src/pids").read_text().split()]
    try:
        assert result.exit_code == 0, result.stderr
        assert len(pids) == 3
        assert wait_for(lambda: not any(alive(p) for p in pids)), "processes outlived the run"
    finally:
        kill_quietly(pids)


DAEMON_THEN_WAIT = """
setsid sleep 4301 < /dev/null > /dev/null 2>&1 &
echo $! > src/pids
exec sleep 4302
"""


def test_a_background_command_is_ended_with_every_descendant(project: Path) -> None:
    pids = project / "src/pids"
    pids.parent.mkdir()
    started: list[int] = []

    def daemon() -> int:
        assert wait_for(lambda: pids.exists() and pids.read_text().strip() != "")
        started.append(int(pids.read_text()))
        pids.unlink()
        return started[-1]

    try:
        with Sandbox.for_project(project, backend="landlock", limits=NO_CGROUP) as box:
            command = box.start(["/bin/sh", "-c", DAEMON_THEN_WAIT])
            first = daemon()
            assert alive(first)
            assert command.kill() == 128 + signal.SIGKILL
            assert wait_for(lambda: not alive(first)), "the daemon outlived kill()"
            second = box.start(["/bin/sh", "-c", DAEMON_THEN_WAIT])
            left_running = daemon()
        assert not second.running
        assert wait_for(lambda: not alive(left_running)), "it outlived Sandbox.close()"
    finally:
        kill_quietly(started)


TRAPS = """
trap 'echo got-term; exit 43' TERM
echo ready > src/ready
while :; do sleep 0.05; done
"""


def test_signals_reach_the_command_through_the_launcher(project: Path) -> None:
    (project / "src").mkdir()
    with Sandbox.for_project(project, backend="landlock", limits=NO_CGROUP) as box:
        command = box.start(["/bin/sh", "-c", TRAPS])
        assert wait_for((project / "src/ready").exists)
        command.signal(signal.SIGTERM)
        assert command.wait(15) == 43
        assert "got-term" in command.read_new().stdout


STOCKADE_THEN_KILLED = """
import sys
from stockade.runner import Sandbox
from stockade.sandbox.limits import Limits
with Sandbox.for_project(sys.argv[1], backend="landlock",
                         limits=Limits(memory_max_bytes=None, pids_max=None)) as box:
    box.run(["/bin/sh", "-c", "setsid sleep 4303 < /dev/null > /dev/null 2>&1 & "
             "echo $! $$ > src/pids; exec sleep 4304"])
"""


def test_killing_stockade_with_sigkill_ends_the_run(project: Path) -> None:
    (project / "src").mkdir()
    owner = subprocess.Popen([sys.executable, "-c", STOCKADE_THEN_KILLED, str(project)])
    pids: list[int] = []
    try:
        assert wait_for(lambda: (project / "src/pids").exists() and bool(
            (project / "src/pids").read_text().strip()))  # fmt: skip
        pids = [int(pid) for pid in (project / "src/pids").read_text().split()]
        assert all(alive(pid) for pid in pids)
        owner.kill()
        owner.wait()
        assert wait_for(lambda: not any(alive(pid) for pid in pids)), "it outlived stockade"
    finally:
        owner.kill()
        owner.wait()
        kill_quietly(pids)


def test_the_posture_names_what_landlock_cannot_do(project: Path) -> None:
    with Sandbox.for_project(project, backend="landlock") as box:
        posture = box.posture
    text = "\n".join((*posture.gaps, posture.filesystem, posture.network))
    assert "no PID namespace" in text and "command lines" in text
    assert "/tmp" in text and "/dev/shm" in text
    assert "loopback" in text
    enforced = "\n".join(landlock.describe(landlock.policy_for(box.policy)).enforced)
    assert "chmod" in enforced and "/dev/pts" in enforced and "subreaper" in enforced
    assert "MPTCP" in enforced
