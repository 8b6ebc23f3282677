"""Session.fetch: the network policy first (what the jail could not reach is not fetched),
then the gate (a network action is tier high), then the ledger."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from stockade.errors import PermissionDenied
from stockade.net.domains import DomainPolicy
from stockade.net.fetch import FetchRefused
from stockade.permissions.ledger import Ledger
from stockade.permissions.prompt import Choice, PromptRequest
from stockade.permissions.rules import Namespace, RuleDecision, RuleStore
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


TWO_HOSTS = DomainPolicy.from_lists(
    private_domains=["site.test"],
    allow_private=True,  # the test hosts live on loopback (also those asked about)
    test_mode=True,
    test_hosts={"site.test": "127.0.0.1", "blocked.test": "127.0.0.1", "other.test": "127.0.0.1"},
)


@pytest.fixture
def blocked() -> Iterator[HttpServer]:
    with HttpServer("blocked") as server:
        yield server


@pytest.mark.parametrize("network", ["allow", "allowlist"])
def test_a_redirect_to_a_denied_host_is_not_followed(
    project: Path, origin: HttpServer, blocked: HttpServer, network: str
) -> None:
    """Issue 17.5: every hop goes through the check of the first; judged at the target."""
    RuleStore().add(project, Namespace.DOMAIN, "blocked.test", RuleDecision.DENY)
    url = f"http://site.test:{origin.port}/redirect/302?to=http://blocked.test:{blocked.port}/hello"
    with session(project, autonomy="yolo", network=network, domain_policy=TWO_HOSTS) as s:
        with pytest.raises(PermissionDenied, match=r"blocked\.test"):
            s.fetch(url)
        entries = Ledger().entries(session=s.session_id)
    assert blocked.requests == []
    assert [r.path for r in origin.requests] == [url.split(str(origin.port), 1)[1]]
    assert any("blocked.test" in e.action and e.decision == "denied" for e in entries)


def test_a_redirect_to_an_unlisted_host_is_asked_about(
    project: Path, origin: HttpServer, blocked: HttpServer
) -> None:
    url = f"http://site.test:{origin.port}/redirect/302?to=http://other.test:{blocked.port}/hello"
    asked: list[str] = []
    allow_other = True

    def prompt(request: PromptRequest) -> Choice:
        asked.append(request.action)
        to_other = request.action.startswith("fetch http://other.test")
        return Choice.DENY_ONCE if to_other and not allow_other else Choice.ALLOW_ONCE

    with session(
        project, autonomy="balanced", prompt=prompt, network="allowlist", domain_policy=TWO_HOSTS
    ) as s:
        result = s.fetch(url)
        assert result.status == 200 and result.text() == "hello from blocked\n"
        assert any("site.test" in action for action in asked)
        assert any("other.test" in action for action in asked)  # the hop was asked about
        allow_other = False
        with pytest.raises(PermissionDenied, match=r"other\.test"):
            s.fetch(url.replace("/hello", "/echo"))
    assert [r.path for r in blocked.requests] == ["/hello"]


def test_yolo_refuses_a_redirect_to_an_unlisted_host(
    project: Path, origin: HttpServer, blocked: HttpServer
) -> None:
    url = f"http://site.test:{origin.port}/redirect/302?to=http://other.test:{blocked.port}/hello"
    with (
        session(project, autonomy="yolo", network="allowlist", domain_policy=TWO_HOSTS) as s,
        pytest.raises(PermissionDenied, match=r"other\.test"),
    ):
        s.fetch(url)
    assert blocked.requests == []
