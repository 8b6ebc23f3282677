"""The proxy's event limits: repeats summarised per window, a host cap per window, a lifetime
budget with a final tally - and the counts always add up."""

from __future__ import annotations

import logging
from collections.abc import Callable

from stockade.net.domains import Decision, DecisionSource
from stockade.net.events import (
    OTHER_HOSTS,
    EventKind,
    EventLimiter,
    LogLimiter,
    ProxyEvent,
)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[tuple[float, Callable[[], None]]] = []

    def __call__(self) -> float:
        return self.now

    def schedule(self, delay: float, callback: Callable[[], None]) -> None:
        self.timers.append((self.now + delay, callback))

    def advance(self, seconds: float) -> None:
        self.now += seconds
        due = [t for t in self.timers if t[0] <= self.now]
        self.timers = [t for t in self.timers if t[0] > self.now]
        for _, callback in due:
            callback()


def refused(host: str, port: int = 443) -> ProxyEvent:
    decision = Decision(host, port, False, DecisionSource.NO_MATCH, f"{host} is not listed")
    return ProxyEvent(EventKind.REFUSED, "http-connect", host, port, decision, None, 0.0)


def limiter(clock: Clock, **limits: int) -> tuple[EventLimiter, list[ProxyEvent]]:
    seen: list[ProxyEvent] = []
    return EventLimiter(seen.append, schedule=clock.schedule, clock=clock, **limits), seen


def total(events: list[ProxyEvent]) -> int:
    return sum(event.count for event in events)


def test_repeats_are_one_summary_when_the_window_ends() -> None:
    clock = Clock()
    limit, seen = limiter(clock)
    for _ in range(50):
        limit.offer(refused("a.test"))
    assert [(e.host, e.count, e.summary) for e in seen] == [("a.test", 1, False)]
    clock.advance(limit.window)  # the timer ends the window
    assert [(e.host, e.count, e.summary) for e in seen][1:] == [("a.test", 49, True)]
    assert "refused 49 more times within 10 s" in seen[1].message
    limit.offer(refused("a.test"))  # a new window reports the host at once again
    assert len(seen) == 3 and not seen[2].summary


def test_many_hosts_become_one_other_hosts_event() -> None:
    clock = Clock()
    limit, seen = limiter(clock, hosts_per_window=3)
    for index in range(10):
        limit.offer(refused(f"h{index}.test"))
    limit.flush()
    assert [e.host for e in seen] == ["h0.test", "h1.test", "h2.test", OTHER_HOSTS]
    assert (seen[-1].count, seen[-1].hosts) == (7, 7)
    assert seen[-1].subject == "7 other hosts (http-connect)"
    assert total(seen) == 10


def test_the_budget_bounds_events_and_the_tally_keeps_the_count() -> None:
    clock = Clock()
    limit, seen = limiter(clock, budget=5, hosts_per_window=100)
    for index in range(2000):
        limit.offer(refused(f"h{index % 40}.test"))
        if index % 100 == 99:
            clock.advance(limit.window)
    limit.close()
    assert len(seen) == 6  # the budget, then one tally
    assert total(seen) == 2000
    assert "budget of 5 was spent" in seen[-1].message


def test_first_uses_count_against_the_budget_and_are_strict() -> None:
    clock = Clock()
    calls: list[ProxyEvent] = []

    def broken(event: ProxyEvent) -> None:
        calls.append(event)
        raise OSError("read-only ledger")

    limit = EventLimiter(broken, schedule=clock.schedule, clock=clock)
    first_use = ProxyEvent(
        EventKind.FIRST_USE, "http", "a.test", 80,
        Decision("a.test", 80, True, DecisionSource.ALLOW_RULE, "listed"), "127.0.0.1", 0.0,
    )  # fmt: skip
    try:
        limit.offer(first_use, strict=True)
    except OSError:
        pass
    else:  # pragma: no cover - the assertion below explains
        raise AssertionError("a first use that cannot be recorded must raise")
    limit.offer(refused("b.test"))  # not strict: logged, not raised
    assert len(calls) == 2


def test_log_lines_are_limited_per_window(caplog: object) -> None:
    clock = Clock()
    records: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    logger = logging.getLogger("stockade.test.loglimit")
    logger.addHandler(Collect())
    logger.propagate = False
    lines = LogLimiter(logger, lines=2, clock=clock)
    for _ in range(100):
        lines.log(logging.WARNING, "too-many", "too many connections")
    clock.advance(lines.window)
    lines.log(logging.WARNING, "too-many", "too many connections")
    assert records == [
        "too many connections",
        "too many connections",
        "too many connections (and 98 similar messages left out)",
    ]
