"""Turn an allowed host name into the exact addresses it is safe to connect to.

Shared by the proxy (async) and ``fetch`` (sync) so both resolve the same way: IP literals are
used as they are, ``*.test`` names come from the policy's test-only override (test mode only),
everything else goes through the system resolver once. The caller then checks every address
(``vet``) and connects to one of exactly those addresses, never to the name again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import socket
from collections.abc import Sequence
from typing import Any

from stockade.net.addresses import IPAddress, first_refused
from stockade.net.domains import Decision, DecisionSource, DomainPolicy, parse_ip_literal

_AddrInfo = tuple[Any, Any, Any, Any, Any]


class ResolveError(OSError):
    """The name did not resolve (or resolved to nothing usable)."""


def fixed_addresses(policy: DomainPolicy, host: str) -> list[IPAddress] | None:
    """Addresses known without DNS: an IP literal, or a test-mode override; else None."""
    literal = parse_ip_literal(host)
    if literal is not None:
        return [literal]
    override = policy.test_address(host)
    if override is not None:
        return [ipaddress.ip_address(override)]
    return None


def _from_addrinfo(host: str, infos: Sequence[_AddrInfo]) -> list[IPAddress]:
    addresses: list[IPAddress] = []
    for family, _type, _proto, _canon, sockaddr in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        address = ipaddress.ip_address(sockaddr[0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise ResolveError(f"{host} has no IPv4 or IPv6 address")
    return addresses


def resolve(policy: DomainPolicy, host: str, port: int) -> list[IPAddress]:
    """Resolve ``host`` (normalised) once; raise ResolveError if it does not resolve."""
    fixed = fixed_addresses(policy, host)
    if fixed is not None:
        return fixed
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except OSError as error:
        raise ResolveError(f"cannot resolve {host}: {error}") from None
    return _from_addrinfo(host, infos)


async def resolve_async(policy: DomainPolicy, host: str, port: int) -> list[IPAddress]:
    """``resolve`` for the event loop (the lookup runs in the loop's executor)."""
    fixed = fixed_addresses(policy, host)
    if fixed is not None:
        return fixed
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
    except OSError as error:
        raise ResolveError(f"cannot resolve {host}: {error}") from None
    return _from_addrinfo(host, infos)


def vet(decision: Decision, addresses: Sequence[IPAddress]) -> Decision:
    """Check every resolved address; an allowed decision becomes refused if any is refused."""
    refusal = first_refused(list(addresses), allow_private=decision.allow_private)
    if refusal is None:
        return decision
    rule = f"`{decision.rule}`" if decision.rule is not None else "the allow decision"
    if refusal.overridable:
        fix = (
            f"if {decision.host} really lives on a private network, allow private addresses "
            f"for it: set allow_private = true for {rule}"
        )
    else:
        fix = "none: this address class is always refused (metadata, unspecified, multicast)"
    return dataclasses.replace(
        decision,
        allowed=False,
        source=DecisionSource.ADDRESS,
        reason=f"{decision.host} is allowed by {rule} but {refusal.reason}",
        fix=fix,
    )
