"""Runs INSIDE a jail for ``stockade doctor``: tries what the sandbox must allow or forbid and
prints one JSON object of findings. Standard library only; it must start fast and never raise.

Usage: python3 -I enforcement.py '<json spec>' where the spec holds the paths, ports and
markers the host side prepared (see stockade/doctor.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys


def try_write(path: str) -> dict[str, object]:
    try:
        with open(path, "w") as handle:
            handle.write("stockade doctor canary\n")
    except OSError as error:
        return {"ok": False, "error": f"{type(error).__name__}: {error.strerror}"}
    with contextlib.suppress(OSError):
        os.unlink(path)
    return {"ok": True}


def read_bytes(path: str) -> int | None:
    """How many bytes of a file could be read (None: not readable)."""
    try:
        with open(path, "rb") as handle:
            return len(handle.read(64))
    except OSError:
        return None


def list_dir(path: str) -> dict[str, object]:
    """What the jail sees of a masked path: names, and which files' contents it can read."""
    try:
        entries = sorted(os.listdir(path))
    except FileNotFoundError:
        return {"exists": False, "entries": [], "readable": []}
    except NotADirectoryError:
        size = read_bytes(path)
        return {"exists": True, "entries": [], "readable": [path] if size else []}
    except OSError as error:
        return {"exists": True, "entries": [], "readable": [], "error": error.strerror}
    readable = []
    for name in entries:
        full = os.path.join(path, name)
        if os.path.isfile(full) and read_bytes(full):
            readable.append(full)
    return {"exists": True, "entries": entries, "readable": readable}


def tcp_connect(host: str, port: int) -> dict[str, object]:
    try:
        with socket.create_connection((host, port), timeout=2):
            return {"connected": True}
    except OSError as error:
        return {"connected": False, "error": f"{type(error).__name__}: {error}"}


def abstract_connect(name: str) -> dict[str, object]:
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError as error:
        return {"connected": False, "error": f"socket: {error}"}
    try:
        sock.settimeout(2)
        sock.connect("\0" + name)
        return {"connected": True}
    except OSError as error:
        return {"connected": False, "error": f"{type(error).__name__}: {error}"}
    finally:
        sock.close()


def udp_socket() -> dict[str, object]:
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    except OSError as error:
        return {"created": False, "error": f"{type(error).__name__}: {error}"}
    sock.close()
    return {"created": True}


def interfaces() -> list[str] | None:
    try:
        with open("/proc/net/dev") as handle:
            lines = handle.read().splitlines()[2:]
    except OSError:
        return None
    return sorted(line.split(":", 1)[0].strip() for line in lines if ":" in line)


def find_marker(marker: str) -> list[int]:
    found: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                if marker.encode() in handle.read():
                    found.append(int(name))
        except OSError:
            continue
    return found


def fetch(url: str) -> dict[str, object]:
    """GET through the proxy variables the sandbox set (allowlist mode)."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return {"status": response.status}
    except urllib.error.HTTPError as error:
        return {"status": error.code}
    except OSError as error:
        return {"status": None, "error": f"{type(error).__name__}: {error}"}


def main() -> None:
    spec = json.loads(sys.argv[1])
    report: dict[str, object] = {
        "write_inside": try_write(spec["inside"]),
        "write_session_tmp": try_write(spec["inside_tmp"]),
        "write_outside": try_write(spec["outside"]),
        "write_protected": [try_write(p) | {"path": p} for p in spec["protected"]],
        "masked": [list_dir(p) | {"path": p} for p in spec["masked"]],
        "interfaces": interfaces(),
        "tcp_host_loopback": tcp_connect("127.0.0.1", spec["host_port"]),
        "abstract_socket": abstract_connect(spec["abstract_name"]),
        "udp_socket": udp_socket(),
        # hex-encoded, so the marker is not in any argv in the jail (bwrap's, as pid 1, has ours)
        "sentinel_pids": find_marker(bytes.fromhex(spec["sentinel_marker_hex"]).decode()),
        "secret_env_visible": spec["secret_env_name"] in os.environ,
        "process_count": sum(1 for n in os.listdir("/proc") if n.isdigit()),
    }
    if "allowlist" in spec:
        report["allowlist"] = {
            "allowed": fetch(spec["allowlist"]["allowed_url"]),
            "denied": fetch(spec["allowlist"]["denied_url"]),
        }
    print(json.dumps(report))


main()
