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


def refused_body(session: Session, url: str) -> str:
    """What curl shows for a refused URL: the proxy's 403 body (and the status last)."""
    result = session.execute(f"curl -sS -w '\\nSTATUS %{{http_code}}' {url}")
    assert result.allowed, result.stderr
    return result.stdout


def test_yolo_never_widens_the_allow_list(project: Path, origin: HttpServer) -> None:
    """Issue 17.4: yolo skips the question, so an unlisted host is refused - with the fix."""
    answers: list[str] = []

    def prompt(request: PromptRequest) -> Choice:
        answers.append(request.action)
        return Choice.ALLOW_ONCE

    with Session(project, network="allowlist", domain_policy=domains(), prompt=prompt,
                 autonomy="yolo") as session:  # fmt: skip
        body = refused_body(session, f"http://new.test:{origin.port}/")
        session_id = session.session_id
    assert origin.requests == []  # judged at the origin: nothing arrived
    assert "STATUS 403" in body and "new.test" in body
    assert "yolo" in body and "to allow it" in body  # the fix is named
    assert answers == []  # yolo asks nobody
    network = [e for e in Ledger().entries(session=session_id) if e.kind in ("domain", "network")]
    assert network and all(e.decision == "denied" and "new.test" in e.action for e in network)


def test_a_stored_allow_rule_still_adds_a_host_at_yolo(project: Path, origin: HttpServer) -> None:
    RuleStore().add(project, Namespace.DOMAIN, "new.test", RuleDecision.ALLOW)
    with Session(project, network="allowlist", domain_policy=domains(),
                 autonomy="yolo") as session:  # fmt: skip
        assert "STATUS 200" in fetch(session, f"http://new.test:{origin.port}/")


def test_once_is_this_command_and_the_refusal_is_in_the_result(
    project: Path, origin: HttpServer
) -> None:
    """Issue 18.2: the connection waits for the answer; "once" holds for the command that
    asked (asked once for two connections), the next command asks again; a refusal is
    named in the command's result with the way to allow it."""
    asked: list[str] = []
    answer = Choice.ALLOW_ONCE

    def prompt(request: PromptRequest) -> Choice:
        asked.append(request.action)
        return answer

    url = f"http://new.test:{origin.port}/"
    twice = f"curl -sS -o /dev/null -w 'STATUS %{{http_code}} ' {url} {url}"
    with Session(project, network="allowlist", domain_policy=domains(), prompt=prompt,
                 autonomy="auto-accept") as session:  # fmt: skip
        first = session.execute(twice)
        assert first.stdout.count("STATUS 200") == 2, first.stdout + first.stderr
        assert len(asked) == 1 and "new.test" in asked[0]
        assert len(origin.requests) == 2
        answer = Choice.DENY_ONCE
        second = session.execute(twice)
        assert second.stdout.count("STATUS 403") == 2
        assert len(asked) == 2  # asked again (once was the first command), then not again
        assert len(origin.requests) == 2
    assert first.network_refusals == ()
    [refusal] = second.network_refusals
    assert refusal.host == "new.test" and refusal.count == 2
    text = second.to_text()
    assert f"new.test:{origin.port}" in text and "to allow it" in text


def test_an_answer_about_a_host_decides_each_connection_to_its_own_port(
    project: Path, origin: HttpServer
) -> None:
    """A "once" answer covers the host for the rest of the command; a later connection to
    another port of that host reaches that port, never the port the question was about."""
    asked: list[str] = []

    def prompt(request: PromptRequest) -> Choice:
        asked.append(request.action)
        return Choice.ALLOW_ONCE

    with HttpServer(name="other", files={"/": b"other\n"}) as other:
        first, second = f"http://new.test:{origin.port}/", f"http://new.test:{other.port}/"
        both = f"curl -sS -o /dev/null -w 'STATUS %{{http_code}} ' {first} {second}"
        with Session(project, network="allowlist", domain_policy=domains(), prompt=prompt,
                     autonomy="auto-accept") as session:  # fmt: skip
            result = session.execute(both)
        assert result.stdout.count("STATUS 200") == 2, result.stdout + result.stderr
        assert len(asked) == 1
        assert len(origin.requests) == 1 and len(other.requests) == 1  # each its own port
