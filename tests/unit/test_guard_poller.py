"""The live poller re-checks running commands on its own ticks, is not woken per command, and
after a quiet while sleeps until the next command arrives."""

from __future__ import annotations

import pytest

from stockade.sandbox import guard as guard_module
from stockade.sandbox.guard import LivePoller
from tests.process_support import wait_until


class CountingGuard:
    def __init__(self) -> None:
        self.checks = 0

    def check_live(self) -> list[object]:
        self.checks += 1
        return []


@pytest.fixture
def poller(monkeypatch: pytest.MonkeyPatch) -> LivePoller:
    monkeypatch.setattr(guard_module, "POLL_SECONDS", 0.01)
    monkeypatch.setattr(LivePoller, "IDLE_TICKS", 3)
    return LivePoller()


def test_a_running_command_is_checked_on_every_tick(poller: LivePoller) -> None:
    running = CountingGuard()
    try:
        poller.add(running)  # type: ignore[arg-type]
        assert wait_until(lambda: running.checks >= 3)
    finally:
        poller.close()


def test_a_quiet_poller_sleeps_and_the_next_command_wakes_it(poller: LivePoller) -> None:
    first, second = CountingGuard(), CountingGuard()
    try:
        poller.add(first)  # type: ignore[arg-type]
        assert wait_until(lambda: first.checks >= 1)
        poller.remove(first)  # type: ignore[arg-type]
        assert wait_until(lambda: poller._asleep)
        poller.add(second)  # type: ignore[arg-type]
        assert wait_until(lambda: second.checks >= 2)
    finally:
        poller.close()
    assert poller._thread is not None and not poller._thread.is_alive()
