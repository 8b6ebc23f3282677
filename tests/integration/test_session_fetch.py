"""Session.fetch: the network policy first (what the jail could not reach is not fetched),
then the gate (a network action is tier high), then the ledger."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from stockade.net.domains import DomainPolicy
from stockade.net.fetch import FetchRefused
from stockade.permissions.ledger import Ledger
from stockade.permissions.prompt import Choice
from stockade.session import ActionDenied
from tests.netsupport import HttpServer
from tests.session_support import Answers, session

pytestmark = pytest.mark.integration

POLICY = DomainPolicy.from_lists(
    private_domains=["site.test"], test_mode=True, test_hosts={"site.test": "127.0.0.1"}
)


@pytest.fixture
def origin() -> Iterator[HttpServer]:
    with HttpServer("origin") as server:
        yield server


def test_deny_mode_fetches_nothing_and_asks_nobody(project: Path, origin: HttpServer) -> None:
    answers = Answers(Choice.ALLOW_ONCE)
    with session(project, autonomy="yolo", prompt=answers) as s:
        with pytest.raises(FetchRefused, match="denied"):
            s.fetch(f"http://127.0.0.1:{origin.port}/hello")
        [entry] = Ledger().entries(session=s.session_id)
    assert (entry.decision, entry.source, entry.effects) == (
        "denied",
        "sandbox-policy",
        ("network",),
    )
    assert answers.requests == [] and origin.requests == []


def test_allowlist_refuses_unlisted_hosts_without_asking(project: Path, origin: HttpServer) -> None:
    answers = Answers(Choice.ALLOW_ONCE)
    with (
        session(
            project, autonomy="yolo", prompt=answers, network="allowlist", domain_policy=POLICY
        ) as s,
        pytest.raises(FetchRefused, match="not on the allow-list"),
    ):
        s.fetch(f"http://other.test:{origin.port}/hello")
    assert answers.requests == [] and origin.requests == []


def test_allowlisted_fetches_go_through_the_gate(project: Path, origin: HttpServer) -> None:
    url = f"http://site.test:{origin.port}/hello"
    answers = Answers(Choice.DENY_ONCE)
    with session(
        project, autonomy="balanced", prompt=answers, network="allowlist", domain_policy=POLICY
    ) as s:
        with pytest.raises(ActionDenied):
            s.fetch(url)
        assert origin.requests == []
        answers.answer = Choice.ALLOW_ONCE
        result = s.fetch(url)
        assert (result.status, result.text()) == (200, "hello from origin\n")
        assert [r.action for r in answers.requests] == [f"fetch {url}"] * 2
        assert answers.requests[0].tier.label == "high"
        assert Ledger().entries(session=s.session_id)[-1].exit_code == 0
