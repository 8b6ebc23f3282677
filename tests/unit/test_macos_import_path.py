"""Nothing a macOS run imports may be Linux-only (checked here, on Linux, by pretending to be
macOS after the standard library and the dependencies are loaded)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SIMULATION = textwrap.dedent(
    """
    import importlib.abc, sys, sysconfig, zoneinfo
    import click, mcp.server.mcpserver, platformdirs, rich.console, tree_sitter, tree_sitter_bash
    sysconfig.get_config_vars()
    sys.platform = "darwin"
    LINUX_ONLY = {
        "pyseccomp", "stockade.sandbox.seccomp", "stockade.sandbox.landlock",
        "stockade.sandbox.bwrap",
    }

    class RefuseLinuxOnly(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name in LINUX_ONLY:
                raise ImportError(f"a macOS run imports the Linux-only module {name}")
            return None

    sys.meta_path.insert(0, RefuseLinuxOnly())
    import stockade, stockade.runner, stockade.session, stockade.mcp, stockade.doctor
    import stockade.cli.app, stockade.cli.operator_run, stockade.cli.status, stockade.cli.profile
    import stockade.cli.run, stockade.cli.exec, stockade.cli.doctor, stockade.cli.mcp
    from stockade.sandbox.select import make_backend
    from stockade.vocabulary import AUTO_ORDER
    print(AUTO_ORDER, make_backend("seatbelt").unavailable() is None or "ok")
    """
)


def test_the_macos_import_path_has_no_linux_only_module() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SIMULATION], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("('seatbelt',)")
