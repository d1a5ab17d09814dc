"""The address policy of source downloads (spec: Source download rules 3), as a table."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv6Address, ip_address

import pytest

from almanac.sandbox.addresses import AddressRefused, check_resolved, parse_address, refusal


def teredo(server: str, client: str) -> str:
    """A Teredo address (2001::/32) for `server` and `client`, the client obfuscated as RFC 4380
    writes it."""
    value = (0x20010000 << 96) | (int(IPv4Address(server)) << 64)
    value |= 0x8000 << 48  # flags
    value |= (0xFFFF ^ 3544) << 32  # obfuscated port
    value |= int(IPv4Address(client)) ^ 0xFFFFFFFF
    address = IPv6Address(value)
    assert address.teredo == (IPv4Address(server), IPv4Address(client))
    return str(address)


REFUSED = [
    ("127.0.0.1", "loopback"),
    ("127.255.0.9", "loopback"),
    ("::1", "loopback"),
    ("10.0.0.1", "private"),
    ("10.255.255.255", "private"),
    ("172.16.0.1", "private"),
    ("172.31.255.254", "private"),
    ("192.168.1.1", "private"),
    ("169.254.169.254", "link-local"),
    ("fe80::1", "link-local"),
    ("fe80::1%eth0", "link-local"),
    ("fc00::1", "private"),
    ("fd12:3456::1", "private"),
    ("100.64.0.1", "shared"),
    ("100.127.255.254", "shared"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("ff02::1", "multicast"),
    ("ff0e::1", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("0.0.0.0", "unspecified"),
    ("0.1.2.3", "reserved"),
    ("::", "unspecified"),
    ("::ffff:127.0.0.1", "IPv4-mapped"),
    ("::ffff:10.0.0.1", "IPv4-mapped"),
    ("::ffff:93.184.216.34", "IPv4-mapped"),
    ("::127.0.0.1", "IPv4-compatible"),
    ("::10.0.0.1", "IPv4-compatible"),
    ("2002:7f00:1::", "6to4 wrapping 127.0.0.1 (loopback)"),
    ("2002:c0a8::", "6to4 wrapping 192.168.0.0 (private)"),
    ("2002:a00:1::1", "6to4 wrapping 10.0.0.1 (private)"),
    ("2002:a9fe:a9fe::", "6to4 wrapping 169.254.169.254 (link-local)"),
    (teredo("65.54.227.120", "10.0.0.1"), "Teredo wrapping 10.0.0.1 (private)"),
    (teredo("65.54.227.120", "127.0.0.1"), "Teredo wrapping 127.0.0.1 (loopback)"),
    (teredo("65.54.227.120", "93.184.216.34"), "reserved"),  # Teredo is never public
    ("64:ff9b::a00:1", "NAT64 wrapping 10.0.0.1 (private)"),
    ("64:ff9b::7f00:1", "NAT64 wrapping 127.0.0.1 (loopback)"),
    ("64:ff9b:1::1", "NAT64"),
    ("192.0.2.1", "documentation"),
    ("198.51.100.7", "documentation"),
    ("203.0.113.200", "documentation"),
    ("2001:db8::1", "documentation"),
    ("3fff::1", "documentation"),
    ("198.18.0.1", "benchmarking"),
    ("192.0.0.9", "reserved"),
    ("192.0.0.170", "reserved"),
    ("192.88.99.1", "reserved"),
    ("fec0::1", "site-local"),
    ("100::1", "discard"),
    ("5f00::1", "reserved"),
    ("4000::1", "reserved"),
]

PUBLIC = [
    "93.184.216.34",
    "8.8.8.8",
    "1.1.1.1",
    "100.63.255.255",
    "100.128.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "192.167.255.255",
    "2606:2800:220:1:248:1893:25c8:1946",
    "2a00:1450:4001:81c::200e",
    "64:ff9b::808:808",  # NAT64 of public 8.8.8.8
]


@pytest.mark.parametrize(("text", "why"), REFUSED)
def test_refused_address_forms(text: str, why: str) -> None:
    reason = refusal(ip_address(text))
    assert reason is not None, text
    assert why in reason


@pytest.mark.parametrize("text", PUBLIC)
def test_public_addresses_pass(text: str) -> None:
    assert refusal(ip_address(text)) is None


def test_every_resolved_address_is_checked_whatever_the_order() -> None:
    public, private = ip_address("93.184.216.34"), ip_address("10.0.0.7")
    for answer in ([public, private], [private, public]):
        with pytest.raises(AddressRefused, match=r"rates\.example\.org resolves to 10\.0\.0\.7"):
            check_resolved("rates.example.org", answer)


def test_all_public_answers_are_returned_once_each_in_order() -> None:
    a, b = ip_address("93.184.216.34"), ip_address("2606:2800:220:1:248:1893:25c8:1946")
    assert check_resolved("rates.example.org", [a, b, a]) == [a, b]


def test_no_answer_is_refused() -> None:
    with pytest.raises(AddressRefused, match="resolves to no address"):
        check_resolved("rates.example.org", [])


def test_parse_address_tells_names_from_addresses() -> None:
    assert parse_address("rates.example.org") is None
    assert parse_address("10.0.0.1") == ip_address("10.0.0.1")
    assert parse_address("::1") == ip_address("::1")
