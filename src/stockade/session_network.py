"""The fetch tool of a ``Session``: a URL fetched on the agent's behalf under the session's
network policy.

What the jail could not reach, stockade does not fetch: every hop (the first and each
redirect) goes through the session's network gate - the domain lists, stored rules, then the
gate - and a refusal is recorded in the ledger like any other.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from stockade.errors import StockadeError, UsageError
from stockade.permissions.actions import Effect
from stockade.permissions.prompt import PromptFunction
from stockade.permissions.verdict import Decision
from stockade.session_core import SESSION_PROMPT, ActionDenied, SessionCore

if TYPE_CHECKING:
    from stockade.net.fetch import FetchResult
    from stockade.permissions.network import NetworkRefusal


class NetworkActions(SessionCore):
    """A session's fetch tool, and the network questions asked while a command runs (mixed
    into ``Session``)."""

    def fetch(
        self,
        url: str,
        *,
        method: str = "GET",
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        timeout: float = 30.0,
        max_bytes: int = 5 * 1024 * 1024,
        prompt: PromptFunction | str | None = SESSION_PROMPT,
    ) -> FetchResult:
        """Fetch ``url`` on the agent's behalf under the session's network policy (what the
        jail could not reach, stockade does not fetch). Every hop - the first and each
        redirect - goes through the same check: the lists and deny rules, then the gate (a
        network action is tier high; a host no list covers asks; yolo never adds one)."""
        from stockade.net.fetch import fetch as fetch_url

        self._require_open()
        _url_host(url)  # a bad URL is a usage error before anything is asked
        mode = self.sandbox.policy.network
        if self.network_gate is None:  # deny mode: refused, and recorded
            self._refusing(
                f"fetch {url}", url, (Effect.NETWORK,), lambda: fetch_url(url, mode=mode)
            )
        assert self.network_gate is not None
        asked = self._prompt_for(prompt)
        decisions: list[Decision] = []

        def check_hop(host: str, port: int, hop_url: str) -> None:
            decisions.append(self._fetch_hop(host, port, hop_url, asked))

        started = time.monotonic()
        try:
            result = fetch_url(
                url, mode=mode, policy=self.network_gate.policy, method=method, headers=headers,
                body=body, timeout=timeout, max_bytes=max_bytes, check_hop=check_hop,
            )  # fmt: skip
        except StockadeError as error:
            for decision in decisions:
                self._finish_entry(decision, error.exit_code, time.monotonic() - started)
            raise
        for decision in decisions:
            self._finish_entry(decision, 0, time.monotonic() - started)
        return result

    def _fetch_hop(self, host: str, port: int, url: str, prompt: PromptFunction | None) -> Decision:
        from stockade.net.fetch import FetchRefused

        assert self.network_gate is not None
        outcome = self.network_gate.check_fetch(host, port, action=f"fetch {url}", prompt=prompt)
        if isinstance(outcome, Decision):
            if not outcome.allowed:
                raise ActionDenied(outcome)
            return outcome

        def refuse() -> Decision:  # the lists refused it, or autonomy would have widened them
            raise FetchRefused(outcome.reason, fix=outcome.fix, decision=outcome)

        return self._refusing(f"fetch {url}", url, (Effect.NETWORK,), refuse)

    @contextlib.contextmanager
    def _asking_network(
        self, prompt: PromptFunction | str | None, command: str
    ) -> Iterator[list[NetworkRefusal]]:
        """While a foreground command runs: the proxy asks through its prompt, and the hosts
        its connections were refused for are collected for the result."""
        refusals: list[NetworkRefusal] = []
        if self.network_gate is None:
            yield refusals
            return
        with self.network_gate.asking(self._prompt_for(prompt), command) as scope:
            yield refusals
        refusals += scope.summary()


def _url_host(url: str) -> str:
    from urllib.parse import urlsplit

    from stockade.net.domains import InvalidHost, normalise_host, split_host_port

    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise UsageError(f"can only fetch http:// and https:// URLs, not {url!r}")
    try:
        host, _ = split_host_port(parts.netloc.rpartition("@")[2])
        return normalise_host(host)
    except (InvalidHost, ValueError):
        raise UsageError(f"invalid URL {url!r}", fix="pass an http:// or https:// URL") from None
