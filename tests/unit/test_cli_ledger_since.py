"""``stockade ledger --since``: durations and dates, and a clear error for anything else."""

from __future__ import annotations

from datetime import datetime

import pytest

from stockade.cli.ledger import parse_since
from stockade.errors import UsageError

NOW = 1_700_000_000.0


@pytest.mark.parametrize(
    ("text", "seconds_ago"),
    [("30s", 30), ("10m", 600), ("2h", 7200), ("3d", 3 * 86400), ("1w", 7 * 86400), ("1.5h", 5400)],
)
def test_durations(text: str, seconds_ago: float) -> None:
    assert parse_since(text, now=NOW) == NOW - seconds_ago


def test_dates_are_local_time() -> None:
    assert parse_since("2025-01-31") == datetime(2025, 1, 31).timestamp()
    assert parse_since("2025-01-31T09:30") == datetime(2025, 1, 31, 9, 30).timestamp()


@pytest.mark.parametrize("text", ["", "yesterday", "10 parsecs", "-5m"])
def test_anything_else_is_a_usage_error_with_examples(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_since(text)
    assert "10m" in (caught.value.fix or "")
