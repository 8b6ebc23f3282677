"""Helpers for settings tests: write the layer files where stockade looks for them.

The autouse ``isolated_user_dirs`` fixture (tests/conftest.py) points XDG_CONFIG_HOME and
XDG_DATA_HOME at private directories, so the user file and the trust store are per test.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from stockade.settings import project_files


def user_settings_path() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "stockade" / "settings.toml"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def write_user(text: str) -> Path:
    return write(user_settings_path(), text)


def write_project(project: Path, text: str) -> Path:
    return write(project_files(project)[0], text)


def write_local(project: Path, text: str) -> Path:
    return write(project_files(project)[1], text)
