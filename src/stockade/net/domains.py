"""Which host names the allow-list proxy may connect to: pure policy, no sockets.

Matching happens on the *normalised* host name, so ``Example.COM.``, ``example.com`` and the
IDNA form of a Unicode name all compare equal, and garbage (empty labels, spaces, URL
punctuation, ambiguous numeric forms such as ``127.1`` or ``0x7f.0.0.1`` that C resolvers
silently turn into addresses) is rejected instead of guessed at.

Pattern language (``allowed_domains`` / ``denied_domains``):

``example.com``        exactly that host, any port.
``*.example.com``      any subdomain at any depth (``a.example.com``, ``a.b.example.com``) but
                       **not** the apex ``example.com``; list both to allow both. This is the
                       stricter reading, so a wildcard never grants more than it says.
``example.com:443``    only that port (a port may follow any pattern).
``192.0.2.7``          an IP literal, matched exactly (``[2001:db8::1]:443`` for IPv6 + port).

Deny wins: a host matching any denied rule is refused whatever the allow rules say. Among allow
rules the most specific match decides (exact before wildcard, longer suffix first, a rule with a
port before one without), because its ``allow_private`` flag then applies. No match means
refused ("not on the allow-list") unless an ``ask`` hook answers yes.

Test-only name overrides (``test_hosts``) live here too, because they are policy, and are
deliberately fenced in: honoured only with ``test_mode=True``, only for names under the
reserved ``.test`` top-level domain (RFC 6761, never resolvable on the real internet, so an
override can never redirect a real name), only to IP literals, and the resolved address is
still checked like any other (so a test host on 127.0.0.1 needs ``allow_private`` on its rule,
exactly like a real one would).
"""

from __future__ import annotations

import enum
import ipaddress
import re
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from stockade.errors import ConfigError, UsageError

# Where the user changes things, used in "how to allow it" hints. The settings layer may pass
# its own (e.g. the file name) in DomainRule.source.
ALLOWED_SETTING = "[network] allowed_domains"
DENIED_SETTING = "[network] denied_domains"

# The only top-level domain test_hosts may override (RFC 6761 §6.2: never delegated).
TEST_TLD = "test"

MAX_HOST_LENGTH = 253
_LABEL = re.compile(r"^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$")
_NUMERIC_LABEL = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)$")

AskHook = Callable[[str, int], "bool | Decision | None"]
"""Called for a host no rule matches: True allows, False refuses, None means "no answer"; a
``Decision`` is taken as it is (it says itself why, and how to allow the host)."""


class InvalidHost(UsageError):
    """A host name that is not a valid DNS name or IP literal."""


class InvalidDomainPattern(ConfigError):
    """An ``allowed_domains``/``denied_domains`` entry that cannot be understood."""


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def normalise_host(text: str) -> str:
    """Return the canonical form of a host name or IP literal, or raise InvalidHost.

    Names are lower-cased, lose one trailing dot and are IDNA-encoded (stdlib IDNA 2003 codec,
    so the result is plain ASCII); IPv4 literals must be plain dotted quads; IPv6 literals may
    carry brackets and come back compressed without them.
    """
    if not isinstance(text, str) or not text:
        raise InvalidHost("empty host name", fix="give a host name such as example.com")
    literal = parse_ip_literal(text)
    if literal is not None:
        return str(literal)
    if any(ch.isspace() or ch in "/\\@:?#[]%*" for ch in text):
        raise InvalidHost(
            f"invalid host name {text!r}: contains characters a host name cannot have",
            fix="give just the host, e.g. example.com (no scheme, path, user or port)",
        )
    host = text.lower()
    if host.endswith("."):
        host = host[:-1]
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError as error:
        raise InvalidHost(
            f"invalid host name {text!r}: {error}",
            fix="labels must be 1-63 characters, separated by single dots",
        ) from None
    ascii_host = ascii_host.lower()
    labels = ascii_host.split(".")
    if len(ascii_host) > MAX_HOST_LENGTH or not all(_LABEL.match(label) for label in labels):
        raise InvalidHost(
            f"invalid host name {text!r}",
            fix="use letters, digits and inner hyphens, 1-63 characters per label",
        )
    if _NUMERIC_LABEL.match(labels[-1]) or _is_inet_aton_number(ascii_host):
        raise InvalidHost(
            f"ambiguous numeric host {text!r}: resolvers read it as an IPv4 address",
            fix="write IPv4 addresses as four decimal numbers, e.g. 192.0.2.7",
        )
    return ascii_host


def parse_ip_literal(text: str) -> IPAddress | None:
    """Return the address if ``text`` is a strict IP literal (``[v6]`` allowed), else None.

    Raises InvalidHost for things that look like IPv6 but are not, and for zone ids
    (``fe80::1%eth0``): a zone names an interface on *this* machine, never a remote host.
    """
    bracketed = text.startswith("[") and text.endswith("]")
    inner = text[1:-1] if bracketed else text
    if bracketed or inner.count(":") >= 2:
        if "%" in inner:
            raise InvalidHost(f"IPv6 zone ids are not accepted: {text!r}")
        try:
            return ipaddress.IPv6Address(inner)
        except ValueError:
            raise InvalidHost(f"invalid IPv6 address {text!r}") from None
    try:
        return ipaddress.IPv4Address(text)
    except ValueError:
        return None


def _is_inet_aton_number(host: str) -> bool:
    """True for forms like ``127.1`` or ``0x7f.0.0.1`` that inet_aton (and so glibc) accepts."""
    try:
        socket.inet_aton(host)
    except OSError:
        return False
    return True


def split_host_port(text: str, *, default_port: int | None = None) -> tuple[str, int | None]:
    """Split ``host``, ``host:port``, ``[v6]`` or ``[v6]:port`` (a bare IPv6 has no port).

    The host part is returned as written (not normalised); the port is validated.
    """
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise InvalidHost(f"unclosed '[' in {text!r}")
        host, rest = text[: end + 1], text[end + 1 :]
        if not rest:
            return host, default_port
        if not rest.startswith(":"):
            raise InvalidHost(f"unexpected text after ']' in {text!r}")
        return host, parse_port(rest[1:], text)
    if text.count(":") == 1:
        host, port_text = text.split(":")
        return host, parse_port(port_text, text)
    return text, default_port


def parse_port(port_text: str, context: str) -> int:
    """A decimal TCP port 1-65535, or InvalidHost naming where it came from."""
    if not port_text.isascii() or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise InvalidHost(f"invalid port {port_text!r} in {context!r}", fix="ports are 1-65535")
    return int(port_text)


@dataclass(frozen=True)
class DomainRule:
    """One entry of an allow or deny list, already normalised.

    ``pattern`` is a host, ``*.suffix`` or IP literal; ``port`` None means every port;
    ``allow_private`` lets this rule's host resolve to private/loopback addresses (never to
    cloud-metadata or unroutable ones; see ``stockade.net.addresses``). ``source`` says where the
    rule came from, for messages.
    """

    pattern: str
    port: int | None = None
    allow_private: bool = False
    source: str = ""

    @classmethod
    def parse(cls, text: str, *, allow_private: bool = False, source: str = "") -> DomainRule:
        """Parse ``example.com``, ``*.example.com``, ``host:port``, ``[v6]:port``."""
        entry = text.strip() if isinstance(text, str) else ""
        where = f" in {source}" if source else ""
        if entry in ("", "*", "*.*") or entry.startswith("*:"):
            raise InvalidDomainPattern(
                f"domain pattern {text!r}{where} would match every host",
                fix="list the domains you need; to allow all traffic use network mode 'allow'",
            )
        try:
            host_text, port = split_host_port(entry)
            wildcard = host_text.startswith("*.")
            host = normalise_host(host_text[2:] if wildcard else host_text)
        except InvalidHost as error:
            raise InvalidDomainPattern(
                f"invalid domain pattern {text!r}{where}: {error.message}",
                fix=error.fix or "write example.com, *.example.com or example.com:443",
            ) from None
        if wildcard and parse_ip_literal(host) is not None:
            raise InvalidDomainPattern(
                f"invalid domain pattern {text!r}{where}: a wildcard cannot precede an address",
                fix="write the IP address on its own, e.g. 192.0.2.7",
            )
        pattern = f"*.{host}" if wildcard else host
        return cls(pattern=pattern, port=port, allow_private=allow_private, source=source)

    @property
    def is_wildcard(self) -> bool:
        return self.pattern.startswith("*.")

    def matches(self, host: str, port: int) -> bool:
        """Does this rule cover the (already normalised) ``host`` on ``port``?"""
        if self.port is not None and self.port != port:
            return False
        if self.is_wildcard:
            return host.endswith(self.pattern[1:])  # ".example.com": subdomains, not the apex
        return host == self.pattern

    def specificity(self) -> tuple[int, int, int]:
        """Sort key: exact beats wildcard, longer beats shorter, with-port beats any-port."""
        return (0 if self.is_wildcard else 1, self.pattern.count("."), self.port is not None)

    def __str__(self) -> str:
        if self.port is None:
            return self.pattern
        host = f"[{self.pattern}]" if ":" in self.pattern else self.pattern
        return f"{host}:{self.port}"


class DecisionSource(enum.Enum):
    """Why a decision came out the way it did."""

    DENY_RULE = "deny-rule"
    ALLOW_RULE = "allow-rule"
    NO_MATCH = "no-match"
    ASK_ALLOWED = "ask-allowed"
    ASK_REFUSED = "ask-refused"
    ADDRESS = "address"  # allowed by name, refused after resolving (set by the proxy/fetch)


@dataclass(frozen=True)
class Decision:
    """The verdict on one (host, port): allowed or not, which rule, why, and how to allow it."""

    host: str
    port: int
    allowed: bool
    source: DecisionSource
    reason: str
    rule: DomainRule | None = None
    fix: str | None = None
    allow_private: bool = False

    @property
    def rule_text(self) -> str | None:
        return None if self.rule is None else str(self.rule)


@dataclass(frozen=True)
class DomainPolicy:
    """Allow and deny rules plus the knobs that go with them; ``decide`` is the whole logic.

    ``allow_private`` is the global default for rules (False: a name resolving to a private or
    loopback address is refused). ``test_hosts`` maps ``*.test`` names to IP literals and is
    only accepted together with ``test_mode=True`` (see the module docstring).
    """

    allowed: tuple[DomainRule, ...] = ()
    denied: tuple[DomainRule, ...] = ()
    allow_private: bool = False
    test_mode: bool = False
    test_hosts: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    ask: AskHook | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.test_hosts and not self.test_mode:
            raise ConfigError(
                "test_hosts is a test-only resolver override and test mode is off",
                fix="remove [network.test_hosts]; it is only honoured by the test suite",
            )
        checked: dict[str, str] = {}
        for name, address in self.test_hosts.items():
            try:
                host = normalise_host(name)
            except InvalidHost as error:
                raise ConfigError(f"test_hosts: {error.message}") from None
            if not host.endswith("." + TEST_TLD):
                raise ConfigError(
                    f"test_hosts may only name hosts under .{TEST_TLD}, not {name!r}",
                    fix=f"use a name like {host.split('.')[0]}.{TEST_TLD}",
                )
            try:
                literal = parse_ip_literal(address)
            except InvalidHost:
                literal = None
            if literal is None:
                raise ConfigError(f"test_hosts[{name!r}] must be an IP address, not {address!r}")
            checked[host] = str(literal)
        object.__setattr__(self, "test_hosts", MappingProxyType(checked))

    @classmethod
    def from_lists(
        cls,
        allowed_domains: Iterable[str] = (),
        denied_domains: Iterable[str] = (),
        *,
        allow_private: bool = False,
        private_domains: Iterable[str] = (),
        test_mode: bool = False,
        test_hosts: Mapping[str, str] | None = None,
        ask: AskHook | None = None,
    ) -> DomainPolicy:
        """Build a policy from settings-style string lists.

        ``private_domains`` are allow patterns that also get ``allow_private=True`` (how a
        settings file can say "this one lives on the LAN").
        """
        allowed = [
            DomainRule.parse(text, allow_private=allow_private, source=ALLOWED_SETTING)
            for text in allowed_domains
        ]
        allowed += [
            DomainRule.parse(text, allow_private=True, source=ALLOWED_SETTING)
            for text in private_domains
        ]
        denied = [DomainRule.parse(text, source=DENIED_SETTING) for text in denied_domains]
        return cls(
            allowed=tuple(allowed),
            denied=tuple(denied),
            allow_private=allow_private,
            test_mode=test_mode,
            test_hosts=MappingProxyType(dict(test_hosts or {})),
            ask=ask,
        )

    def test_address(self, host: str) -> str | None:
        """The test-only override for a normalised host, or None (always None outside tests)."""
        if not self.test_mode:
            return None
        return self.test_hosts.get(host)

    def match(self, host: str, port: int) -> Decision:
        """Decide from the rules alone (never calls ``ask``); ``host`` may be un-normalised."""
        host = normalise_host(host)
        for rule in self.denied:
            if rule.matches(host, port):
                return Decision(
                    host=host,
                    port=port,
                    allowed=False,
                    source=DecisionSource.DENY_RULE,
                    rule=rule,
                    reason=f"{host}:{port} matches the deny rule `{rule}` ({_where(rule)})",
                    fix=f"remove `{rule}` from {_where(rule)} (deny rules win over allow rules)",
                )
        matching = [rule for rule in self.allowed if rule.matches(host, port)]
        if matching:
            rule = max(matching, key=DomainRule.specificity)  # max keeps the first of equals
            return Decision(
                host=host,
                port=port,
                allowed=True,
                source=DecisionSource.ALLOW_RULE,
                rule=rule,
                reason=f"{host}:{port} matches the allow rule `{rule}`",
                allow_private=rule.allow_private or self.allow_private,
            )
        return Decision(
            host=host,
            port=port,
            allowed=False,
            source=DecisionSource.NO_MATCH,
            reason=f"{host} is not on the allow-list",
            fix=f"add `{host}` to {ALLOWED_SETTING} (or pass --allow-domain {host})",
        )

    def decide(self, host: str, port: int) -> Decision:
        """Decide, asking the ``ask`` hook (which may block on a person) when no rule matches."""
        decision = self.match(host, port)
        if decision.source is not DecisionSource.NO_MATCH or self.ask is None:
            return decision
        return self.apply_answer(decision, self.ask(decision.host, port))

    def apply_answer(self, decision: Decision, answer: bool | Decision | None) -> Decision:
        """Turn an ``ask`` answer into a decision (None: nobody answered, stays refused).
        A ``Decision`` answer may have been given for another connection to the host (a
        question connections share, an answer kept for the command): it decides this one,
        for its own port - the proxy connects to the port of the decision it gets."""
        if isinstance(answer, Decision):
            return replace(answer, host=decision.host, port=decision.port)
        if answer is None:
            return decision
        if answer:
            return Decision(
                host=decision.host,
                port=decision.port,
                allowed=True,
                source=DecisionSource.ASK_ALLOWED,
                reason=f"{decision.host}:{decision.port} was allowed when asked",
                allow_private=self.allow_private,
            )
        return Decision(
            host=decision.host,
            port=decision.port,
            allowed=False,
            source=DecisionSource.ASK_REFUSED,
            reason=f"{decision.host}:{decision.port} was refused when asked",
            fix=f"add `{decision.host}` to {ALLOWED_SETTING}",
        )


def _where(rule: DomainRule) -> str:
    return rule.source or "the domain rules"
