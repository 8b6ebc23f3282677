"""The bridge's command line, the proxy environment and the jail wiring helpers."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from stockade.net import bridge, jail


def test_parse_defaults_and_options() -> None:
    assert bridge._parse(["--", "true"]) == (
        3128,
        "/run/stockade/proxy.sock",
        False,
        None,
        ["true"],
    )
    parsed = bridge._parse(["--listen-port", "8080", "--socket", "/x.sock", "--proxy-env",
                            "--seccomp-file", "/f.bpf", "--", "sh", "-c", "exit 3"])  # fmt: skip
    assert parsed == (8080, "/x.sock", True, "/f.bpf", ["sh", "-c", "exit 3"])
    # everything after -- belongs to the command, even things that look like our flags
    assert bridge._parse(["--", "cmd", "--socket", "--"]) == (
        3128, "/run/stockade/proxy.sock", False, None, ["cmd", "--socket", "--"]
    )  # fmt: skip


@pytest.mark.parametrize(
    "argv",
    [[], ["true"], ["--"], ["--listen-port", "0", "--", "true"], ["--listen-port", "x", "--", "t"],
     ["--listen-port", "70000", "--", "t"], ["--bogus", "--", "t"], ["--socket"]],
)  # fmt: skip
def test_parse_errors_are_messages(argv: list[str]) -> None:
    assert isinstance(bridge._parse(argv), str)


def test_bad_arguments_exit_2_with_usage() -> None:
    result = subprocess.run(
        [sys.executable, "-I", "-S", str(jail.BRIDGE_SCRIPT), "--listen-port", "nope", "--", "t"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert "usage:" in result.stderr and "invalid --listen-port 'nope'" in result.stderr


def test_bridge_imports_only_the_standard_library() -> None:
    # It runs by path inside the jail with -I -S: no stockade package, no site-packages.
    source = Path(bridge.__file__).read_text()
    assert not re.search(r"^\s*(from|import)\s+stockade", source, re.MULTILINE)
    code = (
        "import sys, runpy; sys.argv = ['bridge']; "
        f"runpy.run_path({str(jail.BRIDGE_SCRIPT)!r}, run_name='not_main'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'stockade'))"
    )
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_proxy_environment() -> None:
    env = bridge.proxy_environment(3128)
    assert env["HTTP_PROXY"] == env["http_proxy"] == "http://127.0.0.1:3128"
    assert env["HTTPS_PROXY"] == env["https_proxy"] == "http://127.0.0.1:3128"
    assert env["ALL_PROXY"] == env["all_proxy"] == "socks5h://127.0.0.1:3128"
    assert env["NO_PROXY"] == env["no_proxy"] == "localhost,127.0.0.1,::1"
    assert len(env) == 8
    assert jail.proxy_environment is bridge.proxy_environment


def test_bridge_command_and_mounts() -> None:
    argv = jail.bridge_command(["make", "test"], python="/usr/bin/python3", proxy_env=True)
    assert argv == [
        "/usr/bin/python3", "-I", "-S", str(jail.BRIDGE_SCRIPT), "--listen-port", "3128",
        "--socket", "/run/stockade/proxy.sock", "--proxy-env", "--", "make", "test",
    ]  # fmt: skip
    assert bridge._parse(argv[4:]) == (
        3128,
        "/run/stockade/proxy.sock",
        True,
        None,
        ["make", "test"],
    )
    assert jail.bwrap_mount_args("/s/net") == [
        "--tmpfs", "/run", "--ro-bind", "/s/net", "/run/stockade"
    ]  # fmt: skip
    assert jail.JAIL_SOCKET_DIR + "/" + jail.SOCKET_NAME == jail.JAIL_SOCKET_PATH


def test_net_package_exports_lazily() -> None:
    code = (
        "import sys, stockade.net as net; "
        "assert 'stockade.net.proxy' not in sys.modules; "
        "assert net.AllowListProxy.__name__ == 'AllowListProxy'; "
        "assert net.FetchResult.__module__ == 'stockade.net.fetch'; "
        "print(sorted(net.__all__) == sorted(dir(net)))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "True", result.stderr


def test_net_all_matches_lazy_table() -> None:
    import stockade.net as net

    assert sorted(net.__all__) == sorted(net._LAZY)


RELAY_FILTER_CHECK = r"""
import os, runpy, socket, sys
bridge = runpy.run_path(sys.argv[1], run_name="bridge")
before = socket.socketpair()  # made before the filter: still usable after it
if bridge["install_filter"](bridge["relay_filter_program"]()) is not None:
    sys.exit(10)
for attempt, code in (
    (lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), 11),
    (lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM), 12),
    (lambda: socket.socketpair(), 13),
    (lambda: os.execv("/bin/true", ["true"]), 14),
):
    try:
        attempt()
    except PermissionError:
        continue
    sys.exit(code)
before[0].sendall(b"x")
sys.exit(0 if before[1].recv(1) == b"x" else 15)
"""


def test_the_relay_filter_denies_new_sockets_and_exec_but_not_the_held_ones() -> None:
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", RELAY_FILTER_CHECK, str(jail.BRIDGE_SCRIPT)],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, (result.returncode, result.stderr)


def test_the_relay_filter_exists_for_every_supported_machine() -> None:
    for machine in bridge.SYSCALL_NUMBERS:
        program = bridge.relay_filter_program(machine)
        assert len(program) == 8 * (4 + len(bridge.RELAY_DENIED_SYSCALLS) + 3)
        assert set(bridge.SYSCALL_NUMBERS[machine][1]) == set(bridge.RELAY_DENIED_SYSCALLS)
