"""Real loopback servers for the network tests: HTTP, HTTPS (own test CA), raw TCP echo.

Everything listens on 127.0.0.1 with an ephemeral port and runs in daemon threads; use them as
context managers. Nothing here talks to any address but loopback.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import io
import json
import shutil
import socket
import socketserver
import ssl
import subprocess
import threading
import urllib.parse
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar

LOOPBACK = "127.0.0.1"


@dataclass
class SeenRequest:
    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes


class _Handler(http.server.BaseHTTPRequestHandler):
    """Routes: /hello, /echo (JSON of what arrived), /big/<n> (n bytes), /redirect/<code>?to=,
    and whatever ``files`` holds (e.g. a PEP 503 index)."""

    protocol_version = "HTTP/1.1"  # keep-alive capable, so the proxy's Connection: close matters
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, body: bytes, content_type: str = "text/plain") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Keep-Alive", "timeout=5")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _handle(self) -> None:
        body = self._body()
        seen = SeenRequest(self.command, self.path, list(self.headers.items()), body)
        self.server.owner.requests.append(seen)
        path = self.path
        if path == "/hello":
            self._send(200, f"hello from {self.server.owner.name}\n".encode())
        elif path == "/echo":
            payload = {
                "method": seen.method,
                "path": seen.path,
                "headers": seen.headers,
                "body": body.decode("latin-1"),
            }
            self._send(200, json.dumps(payload).encode(), "application/json")
        elif path.startswith("/redirect/"):  # /redirect/<status>?to=<url>
            status_text, _, query = path[len("/redirect/") :].partition("?")
            location = urllib.parse.parse_qs(query)["to"][0]
            self.send_response(int(status_text))
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif path.startswith("/big/"):
            self._send(200, b"x" * int(path.rsplit("/", 1)[1]))
        elif path in self.server.owner.files:
            kind = "text/html" if path.endswith("/") else "application/octet-stream"
            self._send(200, self.server.owner.files[path], kind)
        else:
            self._send(404, b"not found\n")

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = _handle


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    owner: HttpServer


class _Served:
    """A socketserver on 127.0.0.1 served from a daemon thread until the ``with`` block ends."""

    _server: socketserver.TCPServer | None = None

    def _serve(self, server: socketserver.TCPServer) -> None:
        self._server = server
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])


@dataclass
class HttpServer(_Served):
    """An HTTP/1.1 server on 127.0.0.1; ``tls`` = (certfile, keyfile) makes it HTTPS."""

    name: str = "origin"
    tls: tuple[Path, Path] | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    requests: list[SeenRequest] = field(default_factory=list)

    def __enter__(self) -> HttpServer:
        server = _Server((LOOPBACK, 0), _Handler)
        server.owner = self
        if self.tls is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(str(self.tls[0]), str(self.tls[1]))
            server.socket = context.wrap_socket(server.socket, server_side=True)
        self._serve(server)
        return self


class _EchoHandler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        owner: EchoServer = self.server.owner  # type: ignore[attr-defined]
        owner.connections += 1
        with contextlib.suppress(OSError):
            while data := self.request.recv(65536):
                self.request.sendall(data)


class _ThreadingTCP(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


@dataclass
class EchoServer(_Served):
    """A raw TCP echo server on 127.0.0.1 (for SOCKS5 and CONNECT tunnels)."""

    connections: int = 0

    def __enter__(self) -> EchoServer:
        server = _ThreadingTCP((LOOPBACK, 0), _EchoHandler)
        server.owner = self  # type: ignore[attr-defined]
        self._serve(server)
        return self


@contextlib.contextmanager
def tcp_listener(greeting: bytes = b"") -> Iterator[int]:
    """A listener on 127.0.0.1 (yields its port) that sends ``greeting`` to every connection
    and closes it: a connection a jail managed is seen on the host."""
    server = socket.socket()
    server.bind((LOOPBACK, 0))
    server.listen(16)
    server.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                with conn:
                    conn.sendall(greeting)
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        server.close()


@dataclass(frozen=True)
class TestCA:
    """A throw-away CA and one server certificate, made with the openssl CLI."""

    __test__: ClassVar[bool] = False  # not a pytest test class

    ca_cert: Path
    cert: Path
    key: Path

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_cert))


def make_test_ca(directory: Path, names: list[str]) -> TestCA:
    """Create a CA and a certificate for ``names`` (DNS SANs) in ``directory``."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("openssl is needed to make test certificates (apt-get install openssl)")
    directory.mkdir(parents=True, exist_ok=True)

    def run(*args: str) -> None:
        subprocess.run([openssl, *args], check=True, capture_output=True, cwd=directory)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        "-subj", "/CN=stockade test CA", "-keyout", "ca.key", "-out", "ca.pem",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")  # fmt: skip
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={names[0]}",
        "-keyout", "server.key", "-out", "server.csr")  # fmt: skip
    sans = ",".join(f"DNS:{name}" for name in names)
    (directory / "ext.cnf").write_text(
        f"subjectAltName={sans}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
    )
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "2", "-extfile", "ext.cnf", "-out", "server.pem")  # fmt: skip
    return TestCA(directory / "ca.pem", directory / "server.pem", directory / "server.key")


def make_wheel(name: str, version: str) -> tuple[str, bytes]:
    """A minimal valid pure-Python wheel: (file name, bytes), for a PEP 503 test index."""
    escaped = name.replace("-", "_")  # wheel file and directory names use underscores
    dist = f"{escaped}-{version}.dist-info"
    files = {
        f"{escaped}/__init__.py": b"VALUE = 42\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: stockade-tests\n"
        b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(
        f"{path},sha256={_b64(hashlib.sha256(data).digest())},{len(data)}\n"
        for path, data in files.items()
    )
    files[f"{dist}/RECORD"] = (record + f"{dist}/RECORD,,\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return f"{escaped}-{version}-py3-none-any.whl", buffer.getvalue()


def _b64(digest: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def simple_index(name: str, version: str) -> dict[str, bytes]:
    """Files for HttpServer.files that make a one-package PEP 503 index under /simple/."""
    wheel_name, wheel = make_wheel(name, version)
    digest = hashlib.sha256(wheel).hexdigest()
    link = f'<a href="/files/{wheel_name}#sha256={digest}">{wheel_name}</a>'
    page = f"<html><body>{link}</body></html>"
    return {
        "/simple/": f'<html><body><a href="/simple/{name}/">{name}</a></body></html>'.encode(),
        f"/simple/{name}/": page.encode(),
        f"/files/{wheel_name}": wheel,
    }


def socks5_connect(
    proxy: tuple[str, int] | str, host: str, port: int, *, timeout: float = 10.0
) -> tuple[int, socket.socket]:
    """Do a SOCKS5 no-auth CONNECT by hand; return (reply code, socket). Domain if not an IP."""
    if isinstance(proxy, str):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    else:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.connect(proxy)
    sock.sendall(b"\x05\x01\x00")
    if recv_exactly(sock, 2) != b"\x05\x00":
        raise RuntimeError("SOCKS5 greeting refused")
    try:
        packed = socket.inet_pton(socket.AF_INET, host)
        address = b"\x01" + packed
    except OSError:
        try:
            address = b"\x04" + socket.inet_pton(socket.AF_INET6, host)
        except OSError:
            encoded = host.encode()
            address = b"\x03" + bytes([len(encoded)]) + encoded
    sock.sendall(b"\x05\x01\x00" + address + port.to_bytes(2, "big"))
    reply = recv_exactly(sock, 10)
    return reply[1], sock


def recv_exactly(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError(f"closed after {len(data)} of {count} bytes")
        data += chunk
    return data


def recv_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


@contextlib.contextmanager
def raw_connection(
    address: tuple[str, int] | str, timeout: float = 10.0
) -> Iterator[socket.socket]:
    family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(address)
        yield sock


def allow_private_in_user_settings() -> None:
    """Write the (trusted) user settings so allowed names may resolve to loopback, where the
    test origins live: for tests that drive the real CLI, which has no test-only resolver."""
    import os

    config = Path(os.environ["XDG_CONFIG_HOME"]) / "stockade"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text("[network]\nallow_private = true\n")
