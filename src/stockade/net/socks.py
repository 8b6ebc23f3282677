"""The proxy's SOCKS side: SOCKS5 CONNECT, and a refusal for SOCKS4.

SOCKS5: CONNECT only, no authentication, IPv4 / domain / IPv6 address types. Refusals get the
standard reply codes (0x02 "not allowed by ruleset" for policy refusals). SOCKS4 is answered
with "request rejected": it cannot carry names, so it is not supported.
"""

from __future__ import annotations

import asyncio
import ipaddress
from typing import TYPE_CHECKING

from stockade.net.connection import Endpoint, Refused, UpstreamFailed, relay
from stockade.net.domains import InvalidHost

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.net.upstream import ConnectionGate

SOCKS_VERSION = 5
SOCKS4_VERSION = 4
SOCKS_REPLY_SUCCEEDED = 0x00
SOCKS_REPLY_GENERAL_FAILURE = 0x01
SOCKS_REPLY_NOT_ALLOWED = 0x02
SOCKS_REPLY_NETWORK_UNREACHABLE = 0x03
SOCKS_REPLY_HOST_UNREACHABLE = 0x04
SOCKS_REPLY_CONNECTION_REFUSED = 0x05
SOCKS_REPLY_TTL_EXPIRED = 0x06
SOCKS_REPLY_COMMAND_NOT_SUPPORTED = 0x07
SOCKS_REPLY_ADDRESS_TYPE_NOT_SUPPORTED = 0x08


async def serve_socks5(client: Endpoint, gate: ConnectionGate, handshake_timeout: float) -> None:
    """Read one SOCKS5 CONNECT request, decide it, then relay or answer the refusal."""
    async with asyncio.timeout(handshake_timeout):
        _version, count = await client.read_exactly(2)
        methods = await client.read_exactly(count)
        if 0 not in methods:
            client.write(b"\x05\xff")  # no acceptable methods: we only do "no auth"
            client.close()
            return
        client.write(b"\x05\x00")
        version, command, _reserved, address_type = await client.read_exactly(4)
        raw_host, raw_name = "", b""
        if version != SOCKS_VERSION:
            client.abort()
            return
        if address_type == 1:
            raw_host = str(ipaddress.IPv4Address(await client.read_exactly(4)))
        elif address_type == 4:
            raw_host = str(ipaddress.IPv6Address(await client.read_exactly(16)))
        elif address_type == 3:
            length = (await client.read_exactly(1))[0]
            raw_name = await client.read_exactly(length)
        else:
            _reply(client, SOCKS_REPLY_ADDRESS_TYPE_NOT_SUPPORTED)
            return
        port = int.from_bytes(await client.read_exactly(2), "big")
    if command != 1:
        _reply(client, SOCKS_REPLY_COMMAND_NOT_SUPPORTED)
        return
    try:
        if address_type == 3:
            raw_host = raw_name.decode("utf-8")
        if port == 0:
            raise InvalidHost("port 0")
        decision = await gate.authorise("socks5", raw_host, port)
        upstream, _address = await gate.open_upstream("socks5", decision)
    except (InvalidHost, UnicodeDecodeError):
        _reply(client, SOCKS_REPLY_HOST_UNREACHABLE)
        return
    except Refused:
        _reply(client, SOCKS_REPLY_NOT_ALLOWED)
        return
    except UpstreamFailed as failure:
        _reply(client, failure.socks_code)
        return
    client.write(bytes([5, SOCKS_REPLY_SUCCEEDED, 0, 1, 0, 0, 0, 0, 0, 0]))
    relay(client, upstream)


def reject_socks4(client: Endpoint) -> None:
    """SOCKS4: request rejected."""
    client.write(b"\x00\x5b" + b"\x00" * 6)
    client.close()


def _reply(client: Endpoint, code: int) -> None:
    client.write(bytes([5, code, 0, 1, 0, 0, 0, 0, 0, 0]))
    client.close()
