"""What the proxy reports, and the limits that keep a jail from growing the host's records.

The proxy reports every refusal and the first use of each host (``ProxyEvent``); the ledger
writes them. A jail can open thousands of refused connections a second, so events pass an
``EventLimiter`` first (and log lines a ``LogLimiter``), with the limits below:

* per ``WINDOW_S`` window, the first refusal of a (host, port) is reported at once; repeats are
  counted and reported as one summary event (``count`` = how many) when the window ends;
* at most ``HOSTS_PER_WINDOW`` different hosts are reported per window; refusals of further
  hosts are summed into one "other hosts" event (``hosts`` = how many distinct ones);
* a proxy reports at most ``MAX_EVENTS_PER_PROXY`` events in its life; after that everything
  is only counted, and stopping the proxy reports one final tally per kind.

So a session's network rows are bounded by ``MAX_EVENTS_PER_PROXY + 2`` whatever the jail does,
and the counts still add up to exactly what happened. Summaries are reported when their window
ends (a timer) or when the proxy stops, whichever comes first.
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

from stockade.net.domains import Decision

# --- the limits (auditable) ---------------------------------------------------------------------
WINDOW_S = 10.0  # seconds per summary window
HOSTS_PER_WINDOW = 20  # (host, port) pairs reported individually per window
MAX_EVENTS_PER_PROXY = 200  # events reported in a proxy's life; the rest are counted
LOG_LINES_PER_WINDOW = 5  # lines per message kind per window; the rest are counted
# ------------------------------------------------------------------------------------------------

Protocol = Literal["http-connect", "http", "socks5"]
OTHER_HOSTS = "*"  # the host of an event that sums up refusals of many hosts


class EventKind(enum.Enum):
    """What a ProxyEvent reports."""

    REFUSED = "refused"  # a connection was refused by the policy or the address check
    FIRST_USE = "first-use"  # the first allowed connection attempt to a host in this proxy's life


@dataclass(frozen=True)
class ProxyEvent:
    """One thing worth recording in the ledger (``domain`` namespace).

    ``count`` > 1 (or ``summary``) means it stands for that many occurrences; ``hosts`` > 1
    means ``host`` is ``OTHER_HOSTS`` and the count is spread over that many hosts.
    """

    kind: EventKind
    protocol: Protocol
    host: str
    port: int
    decision: Decision
    address: str | None  # the vetted address connected to, or the refused one
    time: float
    count: int = 1
    hosts: int = 1
    summary: bool = False
    note: str = ""  # for a summary: what it sums up ("refused 40 more times within 10 s")

    @property
    def subject(self) -> str:
        """What the event is about: ``host:port (protocol)``, or ``N other hosts``."""
        if self.host == OTHER_HOSTS:
            return f"{self.hosts} other hosts ({self.protocol})"
        return f"{self.host}:{self.port} ({self.protocol})"

    @property
    def message(self) -> str:
        verb = "refused" if self.kind is EventKind.REFUSED else "first use of"
        times = f" x{self.count}" if self.summary else ""
        note = f"{self.note}; last: " if self.note else ""
        return f"{verb} {self.subject}{times}: {note}{self.decision.reason}"


EventHook = Callable[[ProxyEvent], None]
Scheduler = Callable[[float, Callable[[], None]], object]  # loop.call_later


MAX_TRACKED_HOSTS = 1024  # distinct names remembered per tally (a bound on memory, not on counts)


@dataclass
class _Tally:
    """Occurrences that are only counted: how many, of how many hosts, the latest one."""

    count: int = 0
    names: set[str] = field(default_factory=set)
    latest: ProxyEvent | None = None

    def add(self, event: ProxyEvent) -> None:
        self.count += event.count
        if len(self.names) < MAX_TRACKED_HOSTS:
            self.names.add(event.host)
        self.latest = event

    @property
    def hosts(self) -> int:
        return len(self.names)


@dataclass
class _Window:
    started: float
    keys: dict[tuple[str, int], ProxyEvent]  # reported this window -> the latest repeat
    repeats: dict[tuple[str, int], int]
    others: _Tally | None = None


class EventLimiter:
    """Passes events on to ``emit`` within the limits above; not thread-safe (the proxy calls
    it from its loop thread only). ``schedule(delay, callback)`` arranges the window's end."""

    def __init__(
        self,
        emit: EventHook,
        *,
        schedule: Scheduler | None = None,
        window: float = WINDOW_S,
        hosts_per_window: int = HOSTS_PER_WINDOW,
        budget: int = MAX_EVENTS_PER_PROXY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._emit_hook = emit
        self._schedule = schedule
        self.window = window
        self.hosts_per_window = hosts_per_window
        self.budget = budget
        self._clock = clock
        self._current: _Window | None = None
        self._timer_pending = False
        self.emitted = 0
        self._unrecorded: dict[EventKind, _Tally] = {}

    def offer(self, event: ProxyEvent, *, strict: bool = False) -> None:
        """Report ``event`` now, later as part of a summary, or only in the final tally.
        ``strict``: a failing hook raises (a first use that cannot be recorded is refused)."""
        if event.kind is EventKind.FIRST_USE:
            self._emit(event, strict=strict)
            return
        window = self._window()
        key = (event.host, event.port)
        if key in window.keys:
            window.keys[key] = event
            window.repeats[key] = window.repeats.get(key, 0) + 1
            self._arm_timer()
        elif len(window.keys) < self.hosts_per_window:
            window.keys[key] = event
            self._emit(event)
        else:
            window.others = window.others or _Tally()
            window.others.add(event)
            self._arm_timer()

    def flush(self) -> None:
        """End the current window (report its summaries); call it when the proxy stops,
        followed by ``close`` for the final tally."""
        window, self._current = self._current, None
        if window is None:
            return
        seconds = f"{self.window:g} s"
        for key, repeats in window.repeats.items():
            note = f"refused {repeats} more time{'s' if repeats != 1 else ''} within {seconds}"
            self._emit(replace(window.keys[key], count=repeats, summary=True, note=note))
        others = window.others
        if others is not None and others.latest is not None:
            note = f"{others.count} refusals of {others.hosts} more hosts within {seconds}"
            self._emit(self._summed(others, note))

    def close(self) -> None:
        """Flush, then report what went past the budget: one tally event per kind."""
        self.flush()
        tallies, self._unrecorded = self._unrecorded, {}
        for kind, tally in tallies.items():
            note = (
                f"{tally.count} more {kind.value} events of {tally.hosts} hosts, counted but "
                f"not recorded one by one (this proxy's budget of {self.budget} was spent)"
            )
            self._deliver(self._summed(tally, note), strict=False)

    @staticmethod
    def _summed(tally: _Tally, note: str) -> ProxyEvent:
        assert tally.latest is not None
        one_host = tally.hosts == 1
        return replace(
            tally.latest,
            host=tally.latest.host if one_host else OTHER_HOSTS,
            count=tally.count,
            hosts=tally.hosts,
            summary=True,
            note=note,
        )

    # -- internals --
    def _window(self) -> _Window:
        now = self._clock()
        current = self._current
        if current is not None and now - current.started >= self.window:
            self.flush()
            current = None
        if current is None:
            current = self._current = _Window(started=now, keys={}, repeats={})
        return current

    def _arm_timer(self) -> None:
        if self._schedule is None or self._timer_pending or self._current is None:
            return
        self._timer_pending = True
        remaining = max(0.0, self.window - (self._clock() - self._current.started))
        self._schedule(remaining, self._timer_fired)

    def _timer_fired(self) -> None:
        self._timer_pending = False
        current = self._current
        if current is not None and self._clock() - current.started >= self.window:
            self.flush()
        elif current is not None:
            self._arm_timer()

    def _emit(self, event: ProxyEvent, *, strict: bool = False) -> None:
        if self.emitted >= self.budget:
            self._unrecorded.setdefault(event.kind, _Tally()).add(event)
            return
        self.emitted += 1
        self._deliver(event, strict=strict)

    def _deliver(self, event: ProxyEvent, *, strict: bool) -> None:
        try:
            self._emit_hook(event)
        except Exception:
            if strict:
                raise
            logging.getLogger("stockade.net.proxy").exception(
                "stockade proxy: recording failed for %s", event.message
            )


class LogLimiter:
    """At most ``LOG_LINES_PER_WINDOW`` lines per message kind per window; the next line after
    a quiet spell says how many were left out."""

    def __init__(
        self,
        logger: logging.Logger,
        *,
        window: float = WINDOW_S,
        lines: int = LOG_LINES_PER_WINDOW,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger = logger
        self.window = window
        self.lines = lines
        self._clock = clock
        self._state: dict[str, tuple[float, int, int]] = {}  # kind -> (start, shown, dropped)

    def log(self, level: int, kind: str, message: str, *args: object, exc: bool = False) -> None:
        now = self._clock()
        start, shown, dropped = self._state.get(kind, (now, 0, 0))
        if now - start >= self.window:
            start, shown = now, 0
        if shown >= self.lines:
            self._state[kind] = (start, shown, dropped + 1)
            return
        if dropped:
            message += f" (and {dropped} similar message{'s' if dropped != 1 else ''} left out)"
        self._state[kind] = (start, shown + 1, 0)
        self.logger.log(level, message, *args, exc_info=exc)


class EventReporter:
    """Where the proxy's refusals and first uses go: the refusal tap at once, ``on_event``
    through an ``EventLimiter``. Used from the proxy's loop thread only; both hooks may be
    replaced while the proxy runs."""

    def __init__(self, on_event: EventHook | None, *, schedule: Scheduler, log: LogLimiter) -> None:
        self.on_event = on_event
        self.refusal_tap: Callable[[Decision], None] | None = None
        self._log = log
        self._limiter = EventLimiter(self._deliver, schedule=schedule)

    def emit(
        self,
        kind: EventKind,
        protocol: Protocol,
        decision: Decision,
        address: str | None,
        *,
        strict: bool = False,
    ) -> None:
        """Report one event; ``strict``: raise if ``on_event`` fails (see ``EventLimiter``)."""
        tap = self.refusal_tap
        if tap is not None and kind is EventKind.REFUSED:
            try:
                tap(decision)
            except Exception:
                self._log.log(logging.ERROR, "tap", "stockade proxy: refusal tap failed", exc=True)
        if self.on_event is None:
            return
        event = ProxyEvent(
            kind=kind,
            protocol=protocol,
            host=decision.host,
            port=decision.port,
            decision=decision,
            address=address,
            time=time.time(),
        )
        self._limiter.offer(event, strict=strict)

    def close(self) -> None:
        """The last summaries and the final tally (the proxy is stopping)."""
        self._limiter.close()

    def _deliver(self, event: ProxyEvent) -> None:
        hook = self.on_event
        if hook is not None:
            hook(event)
