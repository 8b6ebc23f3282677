"""Network mode parsing."""

from __future__ import annotations

import pytest

from stockade.errors import ConfigError
from stockade.net.mode import NetworkMode


@pytest.mark.parametrize(
    ("text", "mode"),
    [("deny", NetworkMode.DENY), ("Allow", NetworkMode.ALLOW), ("allowlist", NetworkMode.ALLOWLIST),
     ("allow-list", NetworkMode.ALLOWLIST), (" ALLOW_LIST ", NetworkMode.ALLOWLIST)],
)  # fmt: skip
def test_parse(text: str, mode: NetworkMode) -> None:
    assert NetworkMode.parse(text) is mode
    assert str(mode) == mode.value


@pytest.mark.parametrize("text", ["", "open", "none", "filtered"])
def test_parse_rejects_with_fix(text: str) -> None:
    with pytest.raises(ConfigError) as caught:
        NetworkMode.parse(text)
    assert caught.value.fix and "allowlist" in caught.value.fix
