"""Which resolved IP addresses the proxy refuses to connect to: the table, then the check.

An allowed *name* is not enough: DNS (or an attacker controlling it) can point an allowed name
at 127.0.0.1, the LAN or the cloud metadata service. So every address a name resolves to is
checked against the table below, and the proxy then connects to exactly the checked address
(no second lookup, so no rebinding window between check and connect).

Two kinds of refusal:

* ``PRIVATE_RANGES``: loopback, RFC 1918, ULA, link-local, CGNAT and other non-public space.
  Refused unless the rule that allowed the name says ``allow_private = true``.
* ``ALWAYS_REFUSED``: cloud metadata endpoints, unspecified (0.0.0.0 reaches local services on
  Linux), multicast, broadcast and reserved space. Refused even with ``allow_private``: nothing
  legitimate lives there and metadata services hand out credentials. (Stricter than "private
  unless allow_private"; see issue 7.)

IPv6 forms that embed an IPv4 address (IPv4-mapped ``::ffff:a.b.c.d``, IPv4-compatible
``::a.b.c.d``, SIIT ``::ffff:0:a.b.c.d``, NAT64 ``64:ff9b::/96`` and ``64:ff9b:1::/48``, 6to4
``2002::/16``, Teredo ``2001::/32``) are judged by the embedded IPv4 address as well, so
``::ffff:127.0.0.1`` is loopback and ``64:ff9b::a9fe:a9fe`` is the metadata service.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# --- the auditable tables ---------------------------------------------------------------------
# (network, what it is). Order does not matter; the most specific entry names the refusal.

ALWAYS_REFUSED: tuple[tuple[str, str], ...] = (
    # cloud metadata / host agents: they hand out credentials
    ("169.254.169.254/32", "cloud metadata service (AWS, GCP, Azure, OpenStack, Oracle, ...)"),
    ("169.254.170.2/32", "cloud metadata service (AWS ECS task credentials)"),
    ("169.254.170.23/32", "cloud metadata service (AWS EKS pod identity)"),
    ("169.254.169.253/32", "cloud metadata service (AWS VPC DNS)"),
    ("169.254.169.123/32", "cloud metadata service (AWS time sync)"),
    ("169.254.0.23/32", "cloud metadata service (Tencent Cloud)"),
    ("169.254.42.42/32", "cloud metadata service (Scaleway)"),
    ("100.100.100.200/32", "cloud metadata service (Alibaba Cloud)"),
    ("192.0.0.192/32", "cloud metadata service (Oracle Cloud, legacy)"),
    ("168.63.129.16/32", "cloud host agent (Azure WireServer)"),
    ("fd00:ec2::254/128", "cloud metadata service (AWS, IPv6)"),
    ("fd00:ec2::23/128", "cloud metadata service (AWS EKS pod identity, IPv6)"),
    # nothing legitimate to connect to
    ("0.0.0.0/8", "unspecified / 'this network' (0.0.0.0 reaches local services)"),
    ("::/128", "unspecified"),
    ("224.0.0.0/4", "multicast"),
    ("ff00::/8", "multicast"),
    ("240.0.0.0/4", "reserved"),
    ("255.255.255.255/32", "broadcast"),
    ("100::/64", "discard-only"),
)

PRIVATE_RANGES: tuple[tuple[str, str], ...] = (
    ("127.0.0.0/8", "loopback"),
    ("::1/128", "loopback"),
    ("10.0.0.0/8", "private (RFC 1918)"),
    ("172.16.0.0/12", "private (RFC 1918)"),
    ("192.168.0.0/16", "private (RFC 1918)"),
    ("fc00::/7", "unique local (ULA, private)"),
    ("169.254.0.0/16", "link-local"),
    ("fe80::/10", "link-local"),
    ("fec0::/10", "site-local (deprecated, private)"),
    ("100.64.0.0/10", "carrier-grade NAT (shared, private)"),
    ("192.0.0.0/24", "IETF protocol assignments (private)"),
    ("198.18.0.0/15", "benchmarking (private)"),
    ("192.0.2.0/24", "documentation (TEST-NET-1)"),
    ("198.51.100.0/24", "documentation (TEST-NET-2)"),
    ("203.0.113.0/24", "documentation (TEST-NET-3)"),
    ("2001:db8::/32", "documentation"),
    ("64:ff9b:1::/48", "local-use NAT64 (private)"),
)

# IPv6 prefixes whose addresses carry an IPv4 address in their low 32 bits.
EMBEDDED_IPV4_PREFIXES: tuple[str, ...] = (
    "::ffff:0:0/96",  # IPv4-mapped
    "::/96",  # IPv4-compatible (deprecated)
    "::ffff:0:0:0/96",  # IPv4-translated (SIIT)
    "64:ff9b::/96",  # NAT64 well-known prefix
    "64:ff9b:1::/48",  # local-use NAT64 (RFC 8215); the IPv4 address is the low 32 bits
)
# ----------------------------------------------------------------------------------------------


def _compile(table: tuple[tuple[str, str], ...]) -> tuple[tuple[IPNetwork, str], ...]:
    networks = [(ipaddress.ip_network(net), label) for net, label in table]
    return tuple(sorted(networks, key=lambda item: item[0].prefixlen, reverse=True))


_ALWAYS = _compile(ALWAYS_REFUSED)
_PRIVATE = _compile(PRIVATE_RANGES)
_EMBEDDED = tuple(ipaddress.IPv6Network(prefix) for prefix in EMBEDDED_IPV4_PREFIXES)


@dataclass(frozen=True)
class AddressCheck:
    """The verdict on one resolved address."""

    address: IPAddress
    refused: bool
    category: str | None = None  # the table's description, e.g. "loopback"
    overridable: bool = False  # would ``allow_private`` let it through?
    via: IPAddress | None = None  # the embedded IPv4 address that decided, if any

    @property
    def reason(self) -> str:
        if not self.refused:
            return f"{self.address} is a public address"
        shown = f"{self.address} (= {self.via})" if self.via is not None else str(self.address)
        return f"resolves to {shown}, a {self.category} address"


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address hidden in an IPv6 address (mapped, compat, NAT64, 6to4, Teredo)."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # the client; the server part is public by construction
    for prefix in _EMBEDDED:
        if address in prefix and int(address) > 1:  # :: and ::1 are not IPv4-compatible
            return ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
    return None


def _lookup(address: IPAddress, table: tuple[tuple[IPNetwork, str], ...]) -> str | None:
    for network, label in table:
        if address.version == network.version and address in network:
            return label
    return None


def check_address(address: IPAddress | str, *, allow_private: bool = False) -> AddressCheck:
    """Is connecting to ``address`` refused? ``allow_private`` lifts only the private class."""
    ip = ipaddress.ip_address(address) if isinstance(address, str) else address
    if isinstance(ip, ipaddress.IPv6Address) and ip.scope_id:
        return AddressCheck(ip, refused=True, category="scoped (interface-local)")
    candidates: list[tuple[IPAddress, IPAddress | None]] = [(ip, None)]
    inner = embedded_ipv4(ip)
    if inner is not None:
        candidates.append((inner, inner))
    for candidate, via in candidates:
        label = _lookup(candidate, _ALWAYS)
        if label is not None:
            return AddressCheck(ip, refused=True, category=label, via=via)
    for candidate, via in candidates:
        label = _lookup(candidate, _PRIVATE)
        if label is not None:
            if allow_private:
                return AddressCheck(ip, refused=False, category=label, overridable=True, via=via)
            return AddressCheck(ip, refused=True, category=label, overridable=True, via=via)
    return AddressCheck(ip, refused=False)


def first_refused(
    addresses: list[IPAddress], *, allow_private: bool = False
) -> AddressCheck | None:
    """Check EVERY address; return the first refusal, or None if all may be used.

    A name with any refused address is refused as a whole: a legitimate public name never
    mixes in private or metadata addresses, and an attacker's DNS would.
    """
    for address in addresses:
        check = check_address(address, allow_private=allow_private)
        if check.refused:
            return check
    return None
