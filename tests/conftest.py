"""Shared fixtures. Every test gets private XDG dirs so it never touches the real user's
settings, ledger or caches."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# Paths under /tmp are replaced by a private tmpfs inside the jail, so a test that checks what
# the jail can see or write *outside* its roots must use a directory that is visible there.
VISIBLE_TMP = Path("/var/tmp")
# The one STOCKADE_ variable a test run keeps: ``STOCKADE_WARM=0 pytest`` runs every test on
# the cold path (a fresh jail per command), as ``scripts/test.sh --cold`` does.
KEPT_SWITCHES = ("STOCKADE_WARM",)
_KEPT = {name: os.environ[name] for name in KEPT_SWITCHES if name in os.environ}


def pytest_configure(config: pytest.Config) -> None:
    checkout = Path(__file__).resolve().parent.parent
    if Path("/tmp") in checkout.parents:
        raise pytest.UsageError(
            f"this checkout ({checkout}) is below /tmp, which every jail replaces with a private "
            "tmpfs, so the tests' interpreter is invisible inside jails; clone elsewhere "
            "(.ci/run does this by itself)"
        )


@pytest.fixture(autouse=True)
def isolated_user_dirs(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    base = tmp_path_factory.mktemp("xdg")
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        (base / name).mkdir()
        monkeypatch.setenv(name, str(base / name))
    for name in list(os.environ):
        if name.startswith("STOCKADE_") and name not in _KEPT:
            monkeypatch.delenv(name)
    # every `stockade run` in its own process, unless a test asks for the run helper
    monkeypatch.setenv("STOCKADE_RUN_HELPER", "0")
    return base


@pytest.fixture
def visible_dir() -> Iterator[Path]:
    """A fresh directory the jail can see (read-only unless made a writable root)."""
    path = Path(tempfile.mkdtemp(prefix="stockade-test-", dir=VISIBLE_TMP))
    path.chmod(0o755)
    try:
        yield Path(os.path.realpath(path))
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def visible_cache(visible_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """XDG_CACHE_HOME in a directory every jail user can search: the per-test XDG dirs lie
    below pytest's 0700 base, which a root launcher's jail user cannot cross (a real
    ~/.cache is below the id-mapped home), and toolchain presets keep their stores there."""
    cache = visible_dir / "cache"
    cache.mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


@pytest.fixture
def project(visible_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project directory, also the current directory."""
    path = visible_dir / "project"
    path.mkdir()
    monkeypatch.chdir(path)
    return path


@pytest.fixture(params=["bwrap", "landlock"])
def backend(request: pytest.FixtureRequest) -> str:
    """Each Linux backend in turn, for tests that must hold on both."""
    name: str = request.param
    return name


def run_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the real ``stockade`` command line in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "stockade", *args],
        cwd=cwd,
        env=env if env is not None else dict(os.environ),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
