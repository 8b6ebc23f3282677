"""The bridge in a real bubblewrap network namespace, in front of the real proxy.

Proves, from inside a jail whose only network is its own loopback: an allowed test host is
reachable through the proxy (curl, urllib, pip), a denied one gets 403, the host's loopback
listener is NOT reachable directly, names do not resolve, and a stopped proxy leaves the jail
with no way out. Runs as whoever runs pytest; as root it also re-runs itself as ``sbxtest``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from stockade.net.domains import DomainPolicy
from stockade.net.jail import (
    BRIDGE_SCRIPT,
    JAIL_PROXY_PORT,
    bridge_command,
    bwrap_mount_args,
    proxy_environment,
)
from stockade.net.proxy import AllowListProxy
from tests.netsupport import HttpServer, TestCA, make_test_ca, simple_index
from tests.process_support import processes_mentioning, wait_until

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]

HAVE_CURL = shutil.which("curl") is not None
PROXY = f"http://127.0.0.1:{JAIL_PROXY_PORT}"
TEST_HOSTS = {"allowed.test": "127.0.0.1", "denied.test": "127.0.0.1", "index.test": "127.0.0.1"}


def jail(
    socket_dir: Path, command: list[str], *, proxy_env: bool = True, show: Path | None = None
) -> list[str]:
    """A bwrap argv: fresh namespaces of every kind, read-only host root, the proxy socket.

    ``/tmp`` is a private tmpfs; ``show`` re-binds one host directory (read-only) into it.
    """
    shown = ["--ro-bind", str(show), str(show)] if show is not None else []
    return [
        "bwrap", "--unshare-all", "--unshare-user", "--die-with-parent",
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", *shown,
        *bwrap_mount_args(socket_dir),
        "--", *bridge_command(command, proxy_env=proxy_env),
    ]  # fmt: skip


def run_jailed(
    socket_dir: Path, script: str, *, proxy_env: bool = True, show: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        jail(socket_dir, ["sh", "-c", script], proxy_env=proxy_env, show=show),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_python_jailed(socket_dir: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        jail(socket_dir, [sys.executable, "-I", "-c", textwrap.dedent(code)]),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def socket_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "net"
    directory.mkdir(mode=0o700)
    return directory


@pytest.fixture(scope="module")
def test_ca(tmp_path_factory: pytest.TempPathFactory) -> TestCA:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    return make_test_ca(tmp_path_factory.mktemp("ca"), ["allowed.test", "index.test"])


@pytest.fixture
def origin() -> Iterator[HttpServer]:
    with HttpServer("origin", files=simple_index("demo-pkg", "1.0")) as server:
        yield server


@pytest.fixture
def proxy(socket_dir: Path) -> Iterator[AllowListProxy]:
    policy = DomainPolicy.from_lists(
        private_domains=["allowed.test", "index.test"],
        denied_domains=["denied.test"],
        test_mode=True,
        test_hosts=TEST_HOSTS,
    )
    with AllowListProxy(policy, handoff_path=socket_dir / "proxy.sock") as running:
        yield running


@pytest.mark.skipif(not HAVE_CURL, reason="curl is not installed")
def test_curl_in_jail_allowed_denied_and_direct(
    proxy: AllowListProxy, socket_dir: Path, origin: HttpServer
) -> None:
    port = origin.port
    result = run_jailed(
        socket_dir,
        f"""
        curl -sS --max-time 20 http://allowed.test:{port}/hello; echo "allowed rc=$?"
        curl -sS --max-time 20 -o /dev/null -w 'denied status=%{{http_code}}\\n' \
            http://denied.test:{port}/hello
        curl -sS --max-time 20 -x socks5h://127.0.0.1:{JAIL_PROXY_PORT} \
            http://allowed.test:{port}/hello; echo "socks rc=$?"
        curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:{port}/hello; echo "direct rc=$?"
        """,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "hello from origin\nallowed rc=0" in out
    assert "denied status=403" in out
    assert "hello from origin\nsocks rc=0" in out
    assert "direct rc=7" in out  # the host's loopback is another namespace: refused
    assert [seen.path for seen in origin.requests] == ["/hello", "/hello"]


@pytest.mark.skipif(not HAVE_CURL, reason="curl is not installed")
def test_curl_https_in_jail_through_connect(
    proxy: AllowListProxy, socket_dir: Path, test_ca: TestCA
) -> None:
    with HttpServer("tls-origin", tls=(test_ca.cert, test_ca.key)) as server:
        result = run_jailed(
            socket_dir,
            f"curl -sS --max-time 20 --cacert {test_ca.ca_cert} "
            f"https://allowed.test:{server.port}/hello",
            show=test_ca.ca_cert.parent,
        )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello from tls-origin\n"


def test_python_in_jail_urllib_and_no_dns(
    proxy: AllowListProxy, socket_dir: Path, origin: HttpServer
) -> None:
    result = run_python_jailed(
        socket_dir,
        f"""
        import socket, urllib.error, urllib.request
        print(urllib.request.urlopen("http://allowed.test:{origin.port}/hello").read().decode())
        try:
            urllib.request.urlopen("http://denied.test:{origin.port}/hello")
        except urllib.error.HTTPError as error:
            print("denied", error.code, error.headers["X-Stockade-Decision"])
        for name in ("allowed.test", "pypi.org"):
            try:
                socket.getaddrinfo(name, 443)
                print("resolved", name)
            except OSError:
                print("no dns for", name)
        try:
            socket.create_connection(("127.0.0.1", {origin.port}), timeout=5)
            print("direct connected")
        except OSError as error:
            print("direct failed", type(error).__name__)
        """,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "hello from origin"
    assert "denied 403 deny-rule" in lines
    assert "no dns for allowed.test" in lines and "no dns for pypi.org" in lines
    assert "direct failed ConnectionRefusedError" in lines


def test_pip_download_in_jail_through_https_proxy(
    proxy: AllowListProxy, socket_dir: Path, test_ca: TestCA
) -> None:
    index = simple_index("demo-pkg", "1.0")
    with HttpServer("index", tls=(test_ca.cert, test_ca.key), files=index) as server:
        result = run_jailed(
            socket_dir,
            # --isolated: ignore this machine's pip config/env (local wheel dirs, extra
            # indexes); requests' own CA variables would override --cert, so drop them.
            "env -u REQUESTS_CA_BUNDLE -u CURL_CA_BUNDLE "
            f"{sys.executable} -m pip download --isolated --no-cache-dir --no-deps "
            f"--disable-pip-version-check --cert {test_ca.ca_cert} "
            f"--index-url https://index.test:{server.port}/simple/ -d /tmp/dl demo-pkg "
            "&& ls /tmp/dl",
            show=test_ca.ca_cert.parent,
        )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "demo_pkg-1.0-py3-none-any.whl" in result.stdout.splitlines()
    assert [seen.path for seen in server.requests][-1].startswith("/files/")


def test_stopping_the_proxy_fails_closed(socket_dir: Path, origin: HttpServer) -> None:
    policy = DomainPolicy.from_lists(
        private_domains=["allowed.test"], test_mode=True, test_hosts=TEST_HOSTS
    )
    proxy = AllowListProxy(policy, handoff_path=socket_dir / "proxy.sock").start()
    code = f"""
        import sys, urllib.error, urllib.request
        url = "http://allowed.test:{origin.port}/hello"
        print("first", urllib.request.urlopen(url).status, flush=True)
        sys.stdin.readline()  # the test stops the proxy now
        try:
            urllib.request.urlopen(url, timeout=10)
            print("second got through")
        except urllib.error.HTTPError as error:
            print("second", error.code, error.read().decode().strip())
        except OSError as error:
            print("second failed", error)
    """
    process = subprocess.Popen(
        jail(socket_dir, [sys.executable, "-I", "-c", textwrap.dedent(code)]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdin is not None
        assert process.stdout.readline() == "first 200\n"
        proxy.stop()
        process.stdin.write("go\n")
        process.stdin.flush()
        out, err = process.communicate(timeout=60)
    finally:
        proxy.stop()
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    assert out.startswith("second 502 stockade: the network proxy is not running"), out
    assert len(origin.requests) == 1


@pytest.mark.skipif(not HAVE_CURL, reason="curl is not installed")
def test_killed_proxy_process_fails_closed(socket_dir: Path, origin: HttpServer) -> None:
    # A crash of the process hosting the proxy (SIGKILL: no cleanup at all) leaves a stale
    # socket file behind; the jail must still have no way out.
    serve = textwrap.dedent(
        f"""
        import sys
        from stockade.net.domains import DomainPolicy
        from stockade.net.proxy import AllowListProxy
        policy = DomainPolicy.from_lists(private_domains=["allowed.test"], test_mode=True,
                                         test_hosts={TEST_HOSTS!r})
        with AllowListProxy(policy, handoff_path={str(socket_dir / "proxy.sock")!r}):
            print("ready", flush=True)
            sys.stdin.read()
        """
    )
    host_proxy = subprocess.Popen(
        [sys.executable, "-c", serve], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert host_proxy.stdout is not None
        assert host_proxy.stdout.readline() == "ready\n"
        url = f"http://allowed.test:{origin.port}/hello"
        before = run_jailed(socket_dir, f"curl -sS --max-time 20 {url}")
        assert before.stdout == "hello from origin\n", before.stderr
        host_proxy.kill()
        host_proxy.wait(timeout=30)
    finally:
        if host_proxy.poll() is None:
            host_proxy.kill()
    assert (socket_dir / "proxy.sock").exists()  # stale: nobody cleaned up
    after = run_jailed(socket_dir, f"curl -sS --max-time 20 -w '%{{http_code}}' {url}")
    assert after.stdout.endswith("502"), after.stdout + after.stderr
    assert "the network proxy is not running" in after.stdout
    socks = run_jailed(
        socket_dir,
        f"curl -sS --max-time 20 -x socks5h://127.0.0.1:{JAIL_PROXY_PORT} {url}; echo rc=$?",
    )
    assert "rc=0" not in socks.stdout
    assert len(origin.requests) == 1


@pytest.mark.parametrize(
    ("script", "expected"),
    [("exit 0", 0), ("exit 42", 42), ("kill -TERM $$", 128 + 15), ("kill -KILL $$", 128 + 9)],
)
def test_exit_status_of_the_command_is_preserved(
    proxy: AllowListProxy, socket_dir: Path, script: str, expected: int
) -> None:
    assert run_jailed(socket_dir, script).returncode == expected


def test_bridge_errors_before_the_command_runs(socket_dir: Path) -> None:
    not_found = subprocess.run(
        jail(socket_dir, ["/nonexistent/tool"]), capture_output=True, text=True, check=False
    )
    assert not_found.returncode == 127
    assert "command not found: /nonexistent/tool" in not_found.stderr


def test_relay_dies_with_the_command_without_a_pid_namespace(tmp_path: Path) -> None:
    # Outside bwrap (no PID namespace to reap it) the relay must still not outlive CMD.
    marker = str(tmp_path / "unique-socket-name.sock")
    with __import__("socket").socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = subprocess.run(
        [sys.executable, "-I", "-S", str(BRIDGE_SCRIPT), "--listen-port", str(port),
         "--socket", marker, "--", "sh", "-c", "exit 3"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 3, result.stderr
    assert wait_until(lambda: not processes_mentioning(marker)), processes_mentioning(marker)


def test_signal_to_the_jailed_command_reaches_it(socket_dir: Path, proxy: AllowListProxy) -> None:
    # CMD is exec'd in place of the bridge, so a signal to the jail's main process is its own.
    script = "trap 'exit 9' USR1; echo ready; while :; do sleep 0.05; done"
    process = subprocess.Popen(
        jail(socket_dir, ["sh", "-c", script]),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "ready\n"
        jailed = _jailed_shell_pid(process.pid)
        os.kill(jailed, signal.SIGUSR1)
        assert process.wait(timeout=30) == 9
    finally:
        if process.poll() is None:
            process.kill()


def _jailed_shell_pid(bwrap_pid: int) -> int:
    """The host PID of the jailed ``sh`` (a descendant of bwrap running the trap loop)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for pid in _descendants(bwrap_pid):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if cmdline[:2] == [b"sh", b"-c"] and b"trap" in cmdline[2]:
                return pid
        time.sleep(0.05)
    raise AssertionError("jailed shell not found")


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def test_proxy_environment_reaches_the_command(proxy: AllowListProxy, socket_dir: Path) -> None:
    result = run_jailed(socket_dir, "env | grep -i _proxy= | sort")
    expected = sorted(f"{name}={value}" for name, value in proxy_environment().items())
    assert result.stdout.split() == expected
    bare = run_jailed(socket_dir, "env | grep -ci _proxy= || true", proxy_env=False)
    assert bare.stdout.strip() == "0"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to the unprivileged user")
def test_net_integration_tests_also_pass_as_unprivileged_user() -> None:
    """Re-run every tests/integration/test_net_*.py module as ``sbxtest`` (no root)."""
    try:
        pwd.getpwnam("sbxtest")
    except KeyError:
        pytest.skip("user sbxtest does not exist")
    root = Path(__file__).resolve().parents[2]
    probe = subprocess.run(
        ["su", "sbxtest", "-s", "/bin/sh", "-c",
         f"cd {root} && {sys.executable} -c 'import stockade.net, pytest'"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    if probe.returncode != 0:
        pytest.skip(
            f"sbxtest cannot run {sys.executable} on {root} ({probe.stderr.strip()[-200:]}); "
            "fix: put the checkout and its venv where sbxtest can read them"
        )
    here = Path(__file__).resolve().parent
    files = " ".join(str(path.relative_to(root)) for path in sorted(here.glob("test_net_*.py")))
    command = (
        f"cd {root} && {sys.executable} -m pytest -q -p no:cacheprovider "
        f"{files} -k 'not unprivileged_user'"
    )
    result = subprocess.run(
        ["su", "sbxtest", "-s", "/bin/sh", "-c", command],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and " skipped" not in result.stdout
