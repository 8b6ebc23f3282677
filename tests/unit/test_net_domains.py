"""Domain policy: host normalisation, glob patterns, ports, deny-wins, the ask hook."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stockade.errors import ConfigError, UsageError
from stockade.net.domains import (
    DecisionSource,
    DomainPolicy,
    DomainRule,
    InvalidDomainPattern,
    InvalidHost,
    normalise_host,
    split_host_port,
)

# --- normalisation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("example.com", "example.com"),
        ("Example.COM", "example.com"),
        ("example.com.", "example.com"),
        ("EXAMPLE.com.", "example.com"),
        ("bücher.de", "xn--bcher-kva.de"),
        ("BÜCHER.de", "xn--bcher-kva.de"),
        ("xn--bcher-kva.de", "xn--bcher-kva.de"),
        ("例え.テスト", "xn--r8jz45g.xn--zckzah"),
        ("a。b。com", "a.b.com"),  # ideographic full stops are label separators in IDNA
        ("_dmarc.example.com", "_dmarc.example.com"),
        ("a-b.example.com", "a-b.example.com"),
        ("localhost", "localhost"),
        ("192.0.2.7", "192.0.2.7"),
        ("2001:DB8::1", "2001:db8::1"),
        ("[2001:db8::1]", "2001:db8::1"),
        ("::ffff:127.0.0.1", "::ffff:7f00:1"),
    ],
)
def test_normalise_host_canonical_forms(raw: str, expected: str) -> None:
    assert normalise_host(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "",
        " example.com",
        "example.com ",
        "exa mple.com",
        "example..com",
        ".example.com",
        "example.com..",
        "-example.com",
        "example-.com",
        "example.com/path",
        "user@example.com",
        "example.com:80",
        "http://example.com",
        "exa%6dple.com",
        "*.example.com",
        "a" * 64 + ".com",
        ".".join(["a" * 63] * 4 + ["com"]),  # > 253 characters
        "example.com\x00.evil",
        "ex\nample.com",
        "[1.2.3.4]",
        "[example.com]",
        "fe80::1%eth0",
        "1::2::3",
    ],
)
def test_normalise_host_rejects_garbage(raw: str) -> None:
    with pytest.raises(InvalidHost):
        normalise_host(raw)


@pytest.mark.parametrize(
    "raw", ["127.1", "0x7f.0.0.1", "2130706433", "0177.0.0.1", "1.2.3.04", "10.0.1", "foo.123"]
)
def test_normalise_host_rejects_ambiguous_numeric_forms(raw: str) -> None:
    # glibc's inet_aton reads these as IPv4 addresses; guessing would hide 127.0.0.1 etc.
    with pytest.raises(InvalidHost, match=r"numeric|IPv4"):
        normalise_host(raw)


def test_invalid_host_is_a_usage_error_with_a_fix() -> None:
    with pytest.raises(UsageError) as caught:
        normalise_host("example.com/x")
    assert caught.value.fix


_label = st.from_regex(r"[a-zA-Z0-9]([a-zA-Z0-9-]{0,20}[a-zA-Z0-9])?", fullmatch=True)
_hostname = (
    st.lists(_label, min_size=1, max_size=5)
    .map(".".join)
    .filter(
        lambda h: not h.split(".")[-1].isdigit() and not h.split(".")[-1].lower().startswith("0x")
    )
)


@given(_hostname, st.booleans())
def test_normalise_host_is_idempotent_and_case_and_dot_insensitive(host: str, dot: bool) -> None:
    try:
        once = normalise_host(host + ("." if dot else ""))
    except InvalidHost:
        return  # e.g. something inet_aton would accept
    assert normalise_host(once) == once
    assert normalise_host(host.upper()) == once
    assert once == once.lower() and not once.endswith(".")


@given(st.text(max_size=40))
def test_normalise_host_only_ever_raises_invalid_host(text: str) -> None:
    try:
        result = normalise_host(text)
    except InvalidHost:
        return
    assert result.isascii()
    assert " " not in result


def test_split_host_port() -> None:
    assert split_host_port("example.com") == ("example.com", None)
    assert split_host_port("example.com:443") == ("example.com", 443)
    assert split_host_port("[::1]:8080") == ("[::1]", 8080)
    assert split_host_port("[::1]") == ("[::1]", None)
    assert split_host_port("::1") == ("::1", None)
    assert split_host_port("example.com", default_port=80) == ("example.com", 80)
    for bad in ("example.com:0", "example.com:65536", "example.com:x", "example.com:", "[::1"):
        with pytest.raises(InvalidHost):
            split_host_port(bad)


# --- patterns ---------------------------------------------------------------------------------


def test_rule_parse_normalises() -> None:
    rule = DomainRule.parse("  *.Example.COM.:443 ")
    assert rule.pattern == "*.example.com"
    assert rule.port == 443
    assert str(rule) == "*.example.com:443"
    assert str(DomainRule.parse("[2001:DB8::1]:443")) == "[2001:db8::1]:443"
    assert DomainRule.parse("*.bücher.de").pattern == "*.xn--bcher-kva.de"


@pytest.mark.parametrize(
    "text", ["", "*", "*.*", "*:443", "ex*ample.com", "*example.com", "a.*.com", "*.1.2.3.4",
             "example.com:99999", "http://example.com", "example.com/"],
)  # fmt: skip
def test_rule_parse_rejects(text: str) -> None:
    with pytest.raises(InvalidDomainPattern) as caught:
        DomainRule.parse(text, source="settings.toml")
    assert caught.value.fix
    assert isinstance(caught.value, ConfigError)


def test_exact_pattern_matches_only_that_host() -> None:
    rule = DomainRule.parse("example.com")
    assert rule.matches("example.com", 443)
    assert rule.matches("example.com", 22)  # no port: every port
    assert not rule.matches("www.example.com", 443)
    assert not rule.matches("notexample.com", 443)
    assert not rule.matches("example.com.evil.net", 443)


def test_wildcard_matches_subdomains_at_any_depth_but_not_the_apex() -> None:
    rule = DomainRule.parse("*.example.com")
    assert rule.matches("a.example.com", 443)
    assert rule.matches("a.b.c.example.com", 443)
    assert not rule.matches("example.com", 443)  # documented: list the apex separately
    assert not rule.matches("badexample.com", 443)
    assert not rule.matches("example.com.evil.net", 443)


def test_port_restricted_pattern() -> None:
    rule = DomainRule.parse("example.com:443")
    assert rule.matches("example.com", 443)
    assert not rule.matches("example.com", 80)


# --- decisions --------------------------------------------------------------------------------


def policy(**kwargs: object) -> DomainPolicy:
    return DomainPolicy.from_lists(**kwargs)  # type: ignore[arg-type]


def test_default_is_refused_with_how_to_allow() -> None:
    decision = policy(allowed_domains=["example.com"]).decide("other.org", 443)
    assert not decision.allowed
    assert decision.source is DecisionSource.NO_MATCH
    assert decision.rule is None
    assert "not on the allow-list" in decision.reason
    assert (
        decision.fix
        == "add `other.org` to [network] allowed_domains (or pass --allow-domain other.org)"
    )


def test_allowed_rule_is_reported() -> None:
    decision = policy(allowed_domains=["*.example.com"]).decide("API.Example.com.", 443)
    assert decision.allowed
    assert decision.host == "api.example.com"
    assert decision.source is DecisionSource.ALLOW_RULE
    assert decision.rule_text == "*.example.com"


def test_deny_wins_over_any_allow() -> None:
    rules = policy(
        allowed_domains=["evil.example.com", "*.example.com"],
        denied_domains=["*.example.com:22", "evil.example.com"],
    )
    evil = rules.decide("evil.example.com", 443)
    assert not evil.allowed
    assert evil.source is DecisionSource.DENY_RULE
    assert evil.rule_text == "evil.example.com"
    assert "deny" in evil.reason and evil.fix and "denied_domains" in evil.fix
    assert not rules.decide("www.example.com", 22).allowed
    assert rules.decide("www.example.com", 443).allowed


def test_most_specific_allow_rule_decides_allow_private() -> None:
    rules = DomainPolicy(
        allowed=(
            DomainRule.parse("*.corp.example"),
            DomainRule.parse("git.corp.example", allow_private=True),
            DomainRule.parse("*.corp.example:443"),
        )
    )
    git = rules.decide("git.corp.example", 22)
    assert git.allowed and git.allow_private and git.rule_text == "git.corp.example"
    web = rules.decide("web.corp.example", 443)
    assert web.rule_text == "*.corp.example:443" and not web.allow_private
    assert rules.decide("web.corp.example", 80).rule_text == "*.corp.example"


def test_global_allow_private_default_applies_to_rules() -> None:
    everywhere = policy(allowed_domains=["a.example"], allow_private=True)
    assert everywhere.decide("a.example", 1).allow_private
    assert not policy(allowed_domains=["a.example"]).decide("a.example", 1).allow_private
    assert policy(private_domains=["lan.example"]).decide("lan.example", 1).allow_private


def test_decide_rejects_invalid_hosts() -> None:
    with pytest.raises(InvalidHost):
        policy(allowed_domains=["example.com"]).decide("127.1", 80)


def test_ip_literal_rules_match_exactly() -> None:
    rules = policy(allowed_domains=["192.0.2.7", "[2001:db8::1]:443"])
    assert rules.decide("192.0.2.7", 80).allowed
    assert rules.decide("[2001:DB8::1]", 443).allowed
    assert not rules.decide("2001:db8::1", 80).allowed
    assert not rules.decide("192.0.2.8", 80).allowed


# --- ask hook ---------------------------------------------------------------------------------


def test_ask_is_consulted_only_when_no_rule_matches() -> None:
    asked: list[tuple[str, int]] = []

    def ask(host: str, port: int) -> bool | None:
        asked.append((host, port))
        return {"yes.example": True, "no.example": False}.get(host)

    rules = policy(allowed_domains=["listed.example"], denied_domains=["bad.example"], ask=ask)
    assert rules.decide("listed.example", 443).source is DecisionSource.ALLOW_RULE
    assert rules.decide("bad.example", 443).source is DecisionSource.DENY_RULE
    yes = rules.decide("YES.example", 443)
    assert yes.allowed and yes.source is DecisionSource.ASK_ALLOWED
    no = rules.decide("no.example", 443)
    assert not no.allowed and no.source is DecisionSource.ASK_REFUSED
    silent = rules.decide("silent.example", 443)
    assert not silent.allowed and silent.source is DecisionSource.NO_MATCH
    assert asked == [("yes.example", 443), ("no.example", 443), ("silent.example", 443)]
    assert rules.match("yes.example", 443).source is DecisionSource.NO_MATCH  # match never asks


# --- test-only resolver override --------------------------------------------------------------


def test_test_hosts_require_test_mode() -> None:
    with pytest.raises(ConfigError, match="test-only"):
        policy(test_hosts={"allowed.test": "127.0.0.1"})


@pytest.mark.parametrize("name", ["github.com", "pypi.org", "test", "allowed.test.example.com"])
def test_test_hosts_only_under_dot_test(name: str) -> None:
    with pytest.raises(ConfigError, match=r"\.test"):
        policy(test_mode=True, test_hosts={name: "127.0.0.1"})


def test_test_hosts_must_map_to_ip_literals() -> None:
    with pytest.raises(ConfigError, match="IP address"):
        policy(test_mode=True, test_hosts={"a.test": "localhost"})


def test_test_hosts_are_normalised_and_consulted_only_in_test_mode() -> None:
    rules = policy(test_mode=True, test_hosts={"Allowed.TEST.": "127.0.0.1"})
    assert rules.test_address("allowed.test") == "127.0.0.1"
    assert rules.test_address("other.test") is None
    assert DomainPolicy().test_address("allowed.test") is None
