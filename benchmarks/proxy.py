"""Throughput and connection-setup latency: direct vs through the allow-list proxy (loopback).

    .venv/bin/python benchmarks/proxy.py [--megabytes 100] [--runs 5] [--connects 200]

Three processes, as in real use: the origin server, the proxy (its own process, like the
stockade session), and the client (this process, like the jailed program). Rows:

* direct                    client -> origin
* HTTP CONNECT              client -> proxy (TCP) -> origin
* SOCKS5                    client -> proxy (TCP) -> origin
* jail path                 client -> bridge (TCP, handed to the proxy over its unix
                            hand-off socket) -> proxy -> origin
* socat (if installed)      client -> socat (a relay written in C) -> origin: a reference for
                            what any extra user-space hop costs on this machine

Throughput: one ``--megabytes`` transfer origin -> client per run; setup: connect, handshake
and a 1-byte round trip, median over ``--connects`` connections per run. Each figure is the
median of ``--runs`` runs; ratios are against "direct" measured in the same process. The test
host name is mapped to 127.0.0.1 by the policy's test-only override, so no DNS time is included.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHUNK = 1024 * 1024
TARGET_THROUGHPUT_RATIO = 0.70
TARGET_ADDED_MS = 2.0


# --- origin server (child process) ------------------------------------------------------------


def serve_origin() -> None:
    """b"T" + 8-byte size: send that many bytes. b"E": echo one byte. Prints the port."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=512)
    print(listener.getsockname()[1], flush=True)
    payload = memoryview(b"\0" * CHUNK)

    def handle(conn: socket.socket) -> None:
        with conn:
            kind = conn.recv(1)
            if kind == b"T":
                (size,) = struct.unpack("!Q", _recv_exactly(conn, 8))
                while size > 0:
                    step = min(size, CHUNK)
                    conn.sendall(payload[:step])
                    size -= step
            elif kind == b"E":
                conn.sendall(conn.recv(1))

    while True:
        conn, _ = listener.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


def serve_proxy(unix_path: str) -> None:
    """Run the allow-list proxy (TCP + the relays' hand-off socket) until stdin closes. Prints
    the TCP port."""
    sys.path.insert(0, str(ROOT / "src"))
    from stockade.net.domains import DomainPolicy
    from stockade.net.proxy import AllowListProxy

    policy = DomainPolicy.from_lists(
        private_domains=["bench.test"], test_mode=True, test_hosts={"bench.test": "127.0.0.1"}
    )
    with AllowListProxy(policy, handoff_path=unix_path, tcp_port=0) as proxy:
        assert proxy.tcp_address is not None
        print(proxy.tcp_address[1], flush=True)
        sys.stdin.read()


def _recv_exactly(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("closed early")
        data += chunk
    return data


# --- client side: how to open a connection to the origin on each path -------------------------

Opener = Callable[[], socket.socket]


def direct(origin_port: int) -> Opener:
    def open_() -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", origin_port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    return open_


def via_connect(proxy_port: int, origin_port: int) -> Opener:
    request = f"CONNECT bench.test:{origin_port} HTTP/1.1\r\nHost: bench.test\r\n\r\n".encode()

    def open_() -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", proxy_port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(request)
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            head += sock.recv(1)
        if b" 200 " not in head:
            raise RuntimeError(head.decode())
        return sock

    return open_


def via_socks5(proxy_port: int, origin_port: int) -> Opener:
    name = b"bench.test"
    request = b"\x05\x01\x00\x03" + bytes([len(name)]) + name + origin_port.to_bytes(2, "big")

    def open_() -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", proxy_port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(b"\x05\x01\x00" + request)  # greeting and request pipelined
        reply = _recv_exactly(sock, 12)
        if reply[3] != 0:
            raise RuntimeError(f"SOCKS5 reply {reply[3]}")
        return sock

    return open_


def measure_throughput(open_: Opener, size: int) -> float:
    """MB/s for one transfer of ``size`` bytes, connection setup excluded."""
    sock = open_()
    buffer = bytearray(CHUNK)
    with sock:
        start = time.perf_counter()
        sock.sendall(b"T" + struct.pack("!Q", size))
        received = 0
        while received < size:
            count = sock.recv_into(buffer)
            if not count:
                raise ConnectionError(f"closed after {received} bytes")
            received += count
        elapsed = time.perf_counter() - start
    return size / elapsed / 1e6


def measure_setup(open_: Opener, connects: int) -> float:
    """Median ms for connect + handshake + a 1-byte round trip."""
    samples = []
    for _ in range(connects):
        start = time.perf_counter()
        sock = open_()
        sock.sendall(b"E!")
        if sock.recv(1) != b"!":
            raise RuntimeError("echo failed")
        samples.append((time.perf_counter() - start) * 1000)
        sock.close()
    return statistics.median(samples)


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time used so far by these processes (robust on a busy machine)."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(child) for child in text.split()]


def _spawn(args: list[str]) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [sys.executable, __file__, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    return process, int(process.stdout.readline())


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start_bridge(port: int, unix_path: str) -> subprocess.Popen[str]:
    """The jail-side bridge, here on the host: hands 127.0.0.1:port's connections to the proxy."""
    bridge = ROOT / "src" / "stockade" / "net" / "bridge.py"
    process = subprocess.Popen(
        [sys.executable, "-I", "-S", str(bridge), "--listen-port", str(port),
         "--socket", unix_path, "--", "sleep", "infinity"],
        text=True,
    )  # fmt: skip
    _wait_listening(port)
    return process


def _start_socat(port: int, origin_port: int) -> subprocess.Popen[str] | None:
    socat = shutil.which("socat")
    if socat is None:
        return None
    process = subprocess.Popen(
        [socat, "-b", str(CHUNK), f"TCP-LISTEN:{port},bind=127.0.0.1,fork,reuseaddr",
         f"TCP:127.0.0.1:{origin_port},nodelay"],
        text=True,
    )  # fmt: skip
    _wait_listening(port)
    return process


def _wait_listening(port: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"nothing listening on port {port}")


def bridge_startup_ms(runs: int) -> tuple[float, float]:
    """Median ms of `python -I -S bridge.py -- true` vs python -I -S exec'ing true itself."""
    bridge = ROOT / "src" / "stockade" / "net" / "bridge.py"

    def timed(argv: list[str]) -> float:
        start = time.perf_counter()
        subprocess.run(argv, check=True)
        return (time.perf_counter() - start) * 1000

    # a fresh port each time: the previous relay may still be dying when the next one binds
    with_bridge = [
        timed([sys.executable, "-I", "-S", str(bridge), "--listen-port", str(_free_port()),
               "--socket", "/nonexistent", "--", "true"])
        for _ in range(runs)
    ]  # fmt: skip
    exec_true = "import os; os.execvp('true', ['true'])"
    bare = [timed([sys.executable, "-I", "-S", "-c", exec_true]) for _ in range(runs)]
    return statistics.median(with_bridge), statistics.median(bare)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--connects", type=int, default=200)
    parser.add_argument("--serve-origin", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve-proxy", metavar="UNIX_PATH", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve_origin:
        serve_origin()
        return 0
    if options.serve_proxy:
        serve_proxy(options.serve_proxy)
        return 0

    size = options.megabytes * 1_000_000
    workdir = tempfile.mkdtemp(prefix="stockade-bench-")
    unix_path = os.path.join(workdir, "proxy.sock")
    origin, origin_port = _spawn(["--serve-origin"])
    proxy, proxy_port = _spawn(["--serve-proxy", unix_path])
    bridge_port = _free_port()
    bridge = _start_bridge(bridge_port, unix_path)
    socat_port = _free_port()
    socat = _start_socat(socat_port, origin_port)
    paths: list[tuple[str, Opener]] = [
        ("direct", direct(origin_port)),
        ("HTTP CONNECT", via_connect(proxy_port, origin_port)),
        ("SOCKS5", via_socks5(proxy_port, origin_port)),
        ("jail path (bridge+CONNECT)", via_connect(bridge_port, origin_port)),
    ]
    if socat is not None:
        paths.append(("socat relay (C, reference)", direct(socat_port)))
    throughput: dict[str, list[float]] = {name: [] for name, _ in paths}
    setup: dict[str, list[float]] = {name: [] for name, _ in paths}
    cpu: dict[str, list[float]] = {name: [] for name, _ in paths}
    relay_pids = [proxy.pid, *children(bridge.pid)]  # the bridge's relay is its CMD's child
    try:
        for _name, open_ in paths:  # warm-up (imports, first-use event, caches)
            measure_throughput(open_, 10_000_000)
            measure_setup(open_, 20)
        for _ in range(options.runs):  # interleaved, so drift affects every path alike
            for name, open_ in paths:
                before = cpu_seconds(relay_pids)
                throughput[name].append(measure_throughput(open_, size))
                cpu[name].append((cpu_seconds(relay_pids) - before) * 1000)
                setup[name].append(measure_setup(open_, options.connects))
    finally:
        for process in (bridge, origin, socat):
            if process is not None:
                process.kill()
                process.wait()
        assert proxy.stdin is not None
        proxy.stdin.close()
        proxy.wait(timeout=30)

    base_mbps = statistics.median(throughput["direct"])
    base_ms = statistics.median(setup["direct"])
    print(
        f"proxy benchmark: loopback, {options.megabytes} MB transfer, "
        f"{options.connects} connects/run, median of {options.runs} runs, {os.cpu_count()} CPUs"
    )
    header = (
        f"{'path':<28}{'MB/s':>9}{'vs direct':>11}{'setup ms':>10}{'added ms':>10}"
        f"{'relay CPU ms':>14}"
    )
    print(header)
    print("-" * len(header))
    for name, _ in paths:
        mbps = statistics.median(throughput[name])
        ms = statistics.median(setup[name])
        relay_ms = statistics.median(cpu[name])
        shown_cpu = "n/a" if name.startswith("socat") else f"{relay_ms:.0f}"
        print(
            f"{name:<28}{mbps:>9.0f}{mbps / base_mbps:>10.0%} {ms:>10.3f}{ms - base_ms:>10.3f}"
            f"{shown_cpu:>14}"
        )
    print("relay CPU ms: CPU time the relaying process(es) spent on one transfer (10 ms ticks)")
    print(
        f"targets: throughput >= {TARGET_THROUGHPUT_RATIO:.0%} of direct, "
        f"<= {TARGET_ADDED_MS:.0f} ms added per connection"
    )
    started, bare = bridge_startup_ms(options.runs * 4)
    print(f"bridge start-up (python -I -S bridge.py -- true): {started:.1f} ms "
          f"(python -I -S exec'ing true without the bridge: {bare:.1f} ms)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
