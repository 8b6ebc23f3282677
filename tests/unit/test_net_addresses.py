"""The refused-address table: every class, and the IPv6 forms that smuggle IPv4 inside."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stockade.net.addresses import (
    ALWAYS_REFUSED,
    PRIVATE_RANGES,
    check_address,
    embedded_ipv4,
    first_refused,
)

PRIVATE = [
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("::1", "loopback"),
    ("10.1.2.3", "RFC 1918"),
    ("172.16.0.1", "RFC 1918"),
    ("172.31.255.255", "RFC 1918"),
    ("192.168.1.1", "RFC 1918"),
    ("fc00::1", "ULA"),
    ("fd12:3456::1", "ULA"),
    ("169.254.1.1", "link-local"),
    ("fe80::1", "link-local"),
    ("100.64.0.1", "carrier-grade NAT"),
    ("100.127.255.254", "carrier-grade NAT"),
    ("198.18.0.1", "benchmarking"),
    ("192.0.2.1", "documentation"),
]

ALWAYS = [
    ("169.254.169.254", "metadata"),
    ("169.254.170.2", "metadata"),
    ("100.100.100.200", "metadata"),
    ("fd00:ec2::254", "metadata"),
    ("168.63.129.16", "Azure"),
    ("192.0.0.192", "metadata"),
    ("0.0.0.0", "unspecified"),
    ("0.1.2.3", "unspecified"),
    ("::", "unspecified"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("ff02::1", "multicast"),
    ("255.255.255.255", "broadcast"),
    ("240.0.0.1", "reserved"),
]

PUBLIC = ["93.184.215.14", "8.8.8.8", "1.1.1.1", "2606:4700::1111", "172.32.0.1", "100.128.0.1",
          "11.0.0.1", "192.169.0.1", "169.255.0.1"]  # fmt: skip


@pytest.mark.parametrize(("address", "label"), PRIVATE)
def test_private_classes_refused_unless_allow_private(address: str, label: str) -> None:
    refused = check_address(address)
    assert refused.refused and refused.overridable
    assert label in (refused.category or "")
    assert label in refused.reason or (refused.category or "") in refused.reason
    allowed = check_address(address, allow_private=True)
    assert not allowed.refused


@pytest.mark.parametrize(("address", "label"), ALWAYS)
def test_always_refused_even_with_allow_private(address: str, label: str) -> None:
    for allow_private in (False, True):
        check = check_address(address, allow_private=allow_private)
        assert check.refused and not check.overridable
        assert label in (check.category or "")


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_pass(address: str) -> None:
    assert not check_address(address).refused


# Every way to write 127.0.0.1 / 169.254.169.254 / 10.0.0.1 inside an IPv6 address.
EMBEDDED_FORMS = [
    "::ffff:{v4}",  # IPv4-mapped
    "::{v4}",  # IPv4-compatible (deprecated, still routed by some stacks)
    "::ffff:0:{v4}",  # IPv4-translated (SIIT)
    "64:ff9b::{v4}",  # NAT64 well-known prefix
    "64:ff9b:1::{v4}",  # local-use NAT64
]


@pytest.mark.parametrize("form", EMBEDDED_FORMS)
@pytest.mark.parametrize(
    ("v4", "overridable"),
    [("127.0.0.1", True), ("10.0.0.1", True), ("169.254.169.254", False), ("0.0.0.0", False)],
)
def test_ipv4_embedded_in_ipv6_is_judged_by_the_ipv4(form: str, v4: str, overridable: bool) -> None:
    address = ipaddress.IPv6Address(form.format(v4=v4))
    check = check_address(address)
    assert check.refused, address
    assert check.overridable is overridable
    if overridable and not form.startswith("64:ff9b:1"):
        assert not check_address(address, allow_private=True).refused


@pytest.mark.parametrize("form", EMBEDDED_FORMS[:4])
def test_public_ipv4_embedded_in_ipv6_passes(form: str) -> None:
    assert not check_address(form.format(v4="8.8.8.8")).refused


def test_6to4_and_teredo_carry_ipv4_too() -> None:
    sixtofour_loopback = ipaddress.IPv6Address("2002:7f00:1::1")
    assert embedded_ipv4(sixtofour_loopback) == ipaddress.IPv4Address("127.0.0.1")
    assert check_address(sixtofour_loopback).refused
    # Teredo: client address is stored bit-inverted in the last 32 bits; this one is 127.0.0.1.
    teredo = ipaddress.IPv6Address("2001:0:4136:e378:8000:63bf:80ff:fffe")
    assert embedded_ipv4(teredo) == ipaddress.IPv4Address("127.0.0.1")
    assert check_address(teredo).refused
    assert check_address("2002:808:808::1").refused is False  # 6to4 of 8.8.8.8


def test_mapped_metadata_reason_names_both_forms() -> None:
    check = check_address("::ffff:169.254.169.254")
    assert "::ffff:a9fe:a9fe" in check.reason and "169.254.169.254" in check.reason
    assert "metadata" in check.reason


def test_scoped_ipv6_is_refused() -> None:
    assert check_address(ipaddress.IPv6Address("2606:4700::1%eth0")).refused


def test_first_refused_checks_every_address() -> None:
    public = ipaddress.ip_address("8.8.8.8")
    loop = ipaddress.ip_address("127.0.0.1")
    assert first_refused([public]) is None
    refusal = first_refused([public, public, loop])
    assert refusal is not None and refusal.address == loop
    assert first_refused([public, loop], allow_private=True) is None


def test_tables_are_valid_networks_with_descriptions() -> None:
    for network, label in ALWAYS_REFUSED + PRIVATE_RANGES:
        ipaddress.ip_network(network)  # strict: no host bits set
        assert label


@given(st.ip_addresses(v=4))
def test_ipv4_mapped_form_always_agrees_with_plain_ipv4(address: ipaddress.IPv4Address) -> None:
    mapped = ipaddress.IPv6Address(f"::ffff:{address}")
    plain, wrapped = check_address(address), check_address(mapped)
    assert plain.refused == wrapped.refused
    assert plain.overridable == wrapped.overridable


@given(st.ip_addresses(v=4))
def test_nat64_form_always_agrees_with_plain_ipv4(address: ipaddress.IPv4Address) -> None:
    nat64 = ipaddress.IPv6Address(f"64:ff9b::{address}")
    assert check_address(nat64).refused == check_address(address).refused
