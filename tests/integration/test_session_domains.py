"""allowlist mode through the agent Session: an unknown host is asked about through the gate,
a "project" answer is stored as a domain rule that answers next time without asking, stored
deny rules win, and the proxy's refusals and first uses are in the ledger."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from stockade.net.domains import DomainPolicy
from stockade.permissions.ledger import Ledger
from stockade.permissions.prompt import Choice, PromptRequest
from stockade.permissions.rules import Namespace, RuleDecision, RuleStore
from stockade.session import Session
from tests.netsupport import HttpServer

pytestmark = pytest.mark.integration


@pytest.fixture
def origin() -> Iterator[HttpServer]:
    with HttpServer(files={"/": b"hello\n"}) as server:
        yield server


def domains() -> DomainPolicy:
    # nothing allowed by the lists: every host is up to rules and answers (test hosts on
    # loopback need the private-address exception)
    return DomainPolicy.from_lists(
        allow_private=True,
        test_mode=True,
        test_hosts={"new.test": "127.0.0.1", "blocked.test": "127.0.0.1"},
    )


def fetch(session: Session, url: str) -> str:
    """curl through the proxy variables (curl is `high`: runs at auto-accept)."""
    result = session.execute(f"curl -sS -o /dev/null -w 'STATUS %{{http_code}}' {url}")
    assert result.allowed, result.stderr
    return result.stdout


def test_unknown_host_is_asked_and_a_project_answer_is_remembered(
    project: Path, origin: HttpServer
) -> None:
    asked: list[str] = []

    def prompt(request: PromptRequest) -> Choice:
        asked.append(request.action)
        assert Choice.ALLOW_PROJECT in request.choices
        return Choice.ALLOW_PROJECT

    url = f"http://new.test:{origin.port}/"
    with Session(project, network="allowlist", domain_policy=domains(), prompt=prompt,
                 autonomy="auto-accept") as session:  # fmt: skip
        assert "STATUS 200" in fetch(session, url)
        session_id = session.session_id
    assert any("new.test" in action for action in asked)

    # a new session, headless: the stored domain rule answers, nobody is asked
    with Session(project, network="allowlist", domain_policy=domains(),
                 autonomy="auto-accept") as session:  # fmt: skip
        assert "STATUS 200" in fetch(session, url)
    kinds = {(e.kind, e.decision) for e in Ledger().entries(session=session_id)}
    assert ("domain", "allowed") in kinds


def test_headless_unknown_host_is_refused_and_recorded(project: Path, origin: HttpServer) -> None:
    with Session(project, network="allowlist", domain_policy=domains(),
                 autonomy="auto-accept") as session:  # fmt: skip
        out = fetch(session, f"http://new.test:{origin.port}/")
        session_id = session.session_id
    assert "STATUS 403" in out  # headless, and autonomy alone never widens the allow-list
    entries = Ledger().entries(session=session_id)
    assert any(e.kind == "domain" and e.decision == "denied" for e in entries)


def test_a_stored_deny_rule_wins_over_the_allow_list(project: Path, origin: HttpServer) -> None:
    RuleStore().add(project, Namespace.DOMAIN, "blocked.test", RuleDecision.DENY)
    policy = DomainPolicy.from_lists(
        private_domains=["blocked.test"], test_mode=True,
        test_hosts={"blocked.test": "127.0.0.1"},
    )  # fmt: skip
    with Session(project, network="allowlist", domain_policy=policy,
                 autonomy="auto-accept") as session:  # fmt: skip
        assert "STATUS 403" in fetch(session, f"http://blocked.test:{origin.port}/")
