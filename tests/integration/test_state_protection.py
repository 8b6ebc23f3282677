"""Nothing a jail writes can weaken a later run: stockade's own state is read-only inside, the
cached seccomp filter is authenticated, and output spills never follow a planted symlink.

Judged from the host: the cache files' bytes, a marker the *next* run writes only if a denied
syscall reached the kernel, the content of a file a symlink pointed at.
"""

from __future__ import annotations

import os
import platform
import struct
import sys
import time
from pathlib import Path

import pytest

from stockade.runner import Sandbox, run
from stockade.sandbox.limits import Limits
from stockade.sandbox.policy import PolicyRequest
from tests.conftest import run_cli

pytestmark = pytest.mark.integration

ALLOW_ALL_PROGRAM = struct.pack("<HBBI", 0x06, 0, 0, 0x7FFF0000)  # BPF_RET|BPF_K, ALLOW
KEYCTL = {"x86_64": 250, "aarch64": 219}[platform.machine()]

# Rewrites every cached filter with an allow-all program and a checksum recomputed the way
# stockade 0.1 checked it (magic line, blake2b-256 of the program, the program).
FORGE = f"""
import hashlib, os, sys
program = {ALLOW_ALL_PROGRAM!r}
magic = b"stockade-seccomp-bpf/1\\n"
forged = 0
for root, _, files in os.walk(sys.argv[1]):
    for name in files:
        if name.endswith(".bpf"):
            path = os.path.join(root, name)
            try:
                with open(path, "wb") as out:
                    out.write(magic + hashlib.blake2b(program, digest_size=32).digest() + program)
                forged += 1
            except OSError:
                pass
open(sys.argv[2], "w").write(str(forged))
"""

# Writes the marker only if keyctl reached the kernel (EOPNOTSUPP for an unknown command);
# under the filter it fails with EPERM first.
KEYCTL_REACHES_KERNEL = f"""
import ctypes, errno, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
if libc.syscall({KEYCTL}, 0xFFFF, 0, 0, 0, 0) == 0 or ctypes.get_errno() != errno.EPERM:
    open(sys.argv[1], "w").write("keyctl reached the kernel")
"""


@pytest.fixture
def writable_cache(visible_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``~/.cache`` made a writable root, the common setting the attack needs."""
    cache = visible_dir / "cache"
    cache.mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
def test_a_forged_filter_in_a_writable_cache_does_not_turn_seccomp_off(
    project: Path, writable_cache: Path, backend: str
) -> None:
    request = PolicyRequest(project=project, writable=(writable_cache,))
    with Sandbox(request, backend=backend) as sandbox:
        first = sandbox.run([sys.executable, "-c", "pass"])  # the filter is cached by now
        assert first.exit_code == 0, first.stderr
        filters = sorted(writable_cache.rglob("*.bpf"))
        assert filters, "no cached filter to attack"
        before = {path: path.read_bytes() for path in filters}
        out = project / "out"  # the Landlock backend freezes the project root itself
        out.mkdir()
        forged = sandbox.run([sys.executable, "-c", FORGE, str(writable_cache), str(out / "n")])
        assert forged.exit_code == 0, forged.stderr
    assert (out / "n").read_text() == "0", "the jail rewrote a cached filter"
    assert {path: path.read_bytes() for path in filters} == before

    # Whatever is on disk now, the next run (a fresh process) still has seccomp.
    for path in filters:
        path.write_bytes(path.read_bytes()[:23] + b"\0" * 32 + ALLOW_ALL_PROGRAM)
    marker = out / "keyctl-succeeded"
    script = [sys.executable, "-c", KEYCTL_REACHES_KERNEL, str(marker)]
    writable = ["--writable", str(writable_cache)]
    result = run_cli("run", "--backend", backend, *writable, "--", *script, cwd=project)
    assert result.returncode == 0, result.stderr
    assert not marker.exists(), "seccomp was off in the next run"


def test_the_marker_sees_keyctl_reach_the_kernel_without_a_filter(project: Path) -> None:
    """Control for the test above: unconfined, the same script leaves its marker."""
    marker = project / "keyctl-succeeded"
    result = run([sys.executable, "-c", KEYCTL_REACHES_KERNEL, str(marker)], backend="none")
    assert result.exit_code == 0, result.stderr
    assert marker.exists()


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
def test_stockade_state_is_read_only_even_inside_a_writable_home(
    project: Path, visible_dir: Path, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    home = visible_dir / "home"
    state = {
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_CACHE_HOME": home / ".cache",
    }
    for variable, path in state.items():
        (path / "stockade").mkdir(parents=True)
        (path / "stockade" / "existing").write_text("kept\n")
        monkeypatch.setenv(variable, str(path))
    user_file = visible_dir / "elsewhere.toml"
    user_file.write_text("")
    monkeypatch.setenv("STOCKADE_CONFIG", str(user_file))
    targets = [path / "stockade" / name for path in state.values() for name in ("existing", "new")]
    script = "; ".join(f'echo pwned > "{t}"' for t in [*targets, user_file]) + "; exit 0"
    request = PolicyRequest(project=project, writable=(home, user_file))
    with Sandbox(request, backend=backend) as sandbox:
        result = sandbox.run(["/bin/sh", "-c", script])
    assert result.exit_code == 0, result.stderr
    for path in state.values():
        assert (path / "stockade" / "existing").read_text() == "kept\n"
        assert not (path / "stockade" / "new").exists()
    assert user_file.read_text() == ""


def test_the_cache_key_is_unreadable_inside_every_jail(project: Path, backend: str) -> None:
    from stockade.userdirs import cache_key_path

    with Sandbox(PolicyRequest(project=project), backend=backend) as sandbox:
        sandbox.run(["true"])
        key = cache_key_path()
        assert key.exists() and key.stat().st_mode & 0o777 == 0o600
        (project / "out").mkdir()
        script = f'cat "{key}" > out/leaked 2>/dev/null; exit 0'
        result = sandbox.run(["/bin/sh", "-c", script])
    assert result.exit_code == 0, result.stderr
    leaked = project / "out" / "leaked"
    assert not leaked.exists() or leaked.read_bytes() == b""


def test_a_planted_spill_symlink_is_not_followed(
    project: Path, visible_dir: Path, isolated_user_dirs: Path
) -> None:
    victim = visible_dir / "victim"
    victim.write_text("precious\n")
    # 0.1 spilled to <cache>/stockade/output/<stamp>-1.stdout: plant that name for the next
    # seconds (a jail with the cache dir writable could do exactly this).
    output = isolated_user_dirs / "XDG_CACHE_HOME" / "stockade" / "output"
    output.mkdir(parents=True)
    now = time.time()
    for offset in range(-1, 30):
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now + offset))
        for stream in ("stdout", "stderr"):
            (output / f"{stamp}-1.{stream}").symlink_to(victim)
    result = run(["/bin/sh", "-c", "seq 1 50000; seq 1 50000 >&2"], limits=Limits(
        output_bytes_per_stream=1024))  # fmt: skip
    assert result.truncated
    assert victim.read_text() == "precious\n"
    assert result.stdout_path is not None and not result.stdout_path.is_symlink()
    assert result.stdout_path.read_text().count("\n") == 50000
    spill_dir = result.stdout_path.parent
    assert spill_dir.stat().st_mode & 0o777 == 0o700


def test_spills_are_capped_and_the_result_says_so(project: Path) -> None:
    limits = Limits(output_bytes_per_stream=1024, output_spill_bytes=64 * 1024)
    with Sandbox(PolicyRequest(project=project), limits=limits) as sandbox:
        result = sandbox.run(["/bin/sh", "-c", "yes 0123456789abcdef | head -c 1000000"])
        assert result.exit_code == 0, result.stderr
        assert result.truncated
        assert result.stdout_path is not None
        assert os.path.getsize(result.stdout_path) == 64 * 1024
        assert result.spill_cap_bytes == 64 * 1024
        assert "capped at 64 KiB" in result.stdout
        # the spill lives in the session's private dir, never below a writable root
        assert not sandbox.policy.is_writable(result.stdout_path)
