"""The address policy of source downloads: only public addresses may be connected to.

Spec, Source download rules 3: every address a source host resolves to is checked; loopback,
private, link-local, shared, multicast and reserved addresses are refused. The policy has no
switch: every downloader, in production and in tests, goes through `check_resolved`.
"""

from __future__ import annotations

from collections.abc import Iterable
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address

IPAddress = IPv4Address | IPv6Address

_SHARED = IPv4Network("100.64.0.0/10")
_RFC1918 = (IPv4Network("10.0.0.0/8"), IPv4Network("172.16.0.0/12"), IPv4Network("192.168.0.0/16"))
_UNIQUE_LOCAL = IPv6Network("fc00::/7")
_GLOBAL_UNICAST = IPv6Network("2000::/3")
_IPV4_COMPATIBLE = IPv6Network("::/96")
_NAT64 = IPv6Network("64:ff9b::/96")

# IANA special-purpose blocks that are not globally reachable, kept here as well so that the
# policy does not depend on which patch release of Python classifies them.
_SPECIAL: tuple[tuple[IPv4Network | IPv6Network, str], ...] = (
    (IPv4Network("0.0.0.0/8"), "reserved (this network)"),
    (IPv4Network("192.0.0.0/24"), "reserved (IETF protocol assignments)"),
    (IPv4Network("192.0.2.0/24"), "documentation"),
    (IPv4Network("192.88.99.0/24"), "reserved (6to4 relay)"),
    (IPv4Network("198.18.0.0/15"), "benchmarking"),
    (IPv4Network("198.51.100.0/24"), "documentation"),
    (IPv4Network("203.0.113.0/24"), "documentation"),
    (IPv4Network("240.0.0.0/4"), "reserved"),
    (IPv4Network("255.255.255.255/32"), "broadcast"),
    (IPv6Network("100::/64"), "discard-only"),
    (IPv6Network("64:ff9b:1::/48"), "local-use NAT64"),
    (IPv6Network("2001::/23"), "reserved (IETF protocol assignments)"),
    (IPv6Network("2001:db8::/32"), "documentation"),
    (IPv6Network("3fff::/20"), "documentation"),
    (IPv6Network("5f00::/16"), "reserved (segment routing)"),
)


def refusal(address: IPAddress) -> str | None:
    """Why a download may not connect to `address` (a short phrase such as "private"), or None
    when it is a public address (spec: Source download rules 3)."""
    if isinstance(address, IPv6Address):
        if address in _NAT64:
            # A DNS64 answer reaches the IPv4 address it embeds: judge that one.
            embedded = IPv4Address(int(address) & 0xFFFFFFFF)
            inner = refusal(embedded)
            return None if inner is None else f"NAT64 wrapping {embedded} ({inner})"
        wrapped = _wrapped_refusal(address)
        if wrapped is not None:
            return wrapped
    if address.is_unspecified:
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if isinstance(address, IPv4Address):
        if address in _SHARED:
            return "shared (100.64.0.0/10)"
        if any(address in net for net in _RFC1918):
            return "private"
    else:
        if address.is_site_local:
            return "site-local"
        if address in _UNIQUE_LOCAL:
            return "private (unique local)"
    for network, label in _SPECIAL:
        if address.version == network.version and address in network:
            return label
    if address.is_reserved:
        return "reserved"
    if isinstance(address, IPv6Address) and address not in _GLOBAL_UNICAST:
        return "reserved (outside 2000::/3)"
    if address.is_private or not address.is_global:
        return "not public"
    return None


def _wrapped_refusal(address: IPv6Address) -> str | None:
    """IPv6 forms that carry an IPv4 address: refused outright, or judged by what they wrap."""
    if address.ipv4_mapped is not None:
        return f"IPv4-mapped ({address.ipv4_mapped})"
    if address in _IPV4_COMPATIBLE and int(address) > 1:
        return f"IPv4-compatible ({IPv4Address(int(address) & 0xFFFFFFFF)})"
    if address.sixtofour is not None:
        inner = refusal(address.sixtofour)
        if inner is not None:
            return f"6to4 wrapping {address.sixtofour} ({inner})"
    if address.teredo is not None:
        server, client = address.teredo
        for wrapped in (server, client):
            inner = refusal(wrapped)
            if inner is not None:
                return f"Teredo wrapping {wrapped} ({inner})"
    return None


class AddressRefused(Exception):
    """A source host resolved to an address the download policy refuses, or to none."""


def check_resolved(host: str, addresses: Iterable[IPAddress]) -> list[IPAddress]:
    """Return the resolved addresses of `host` when EVERY one is public; otherwise raise
    AddressRefused naming the first refused address (spec: Source download rules 3)."""
    checked = list(dict.fromkeys(addresses))
    if not checked:
        raise AddressRefused(f"{host} resolves to no address")
    for address in checked:
        reason = refusal(address)
        if reason is not None:
            raise AddressRefused(f"{host} resolves to {address}, a refused address: {reason}")
    return checked


def parse_address(text: str) -> IPAddress | None:
    """The IP address written in `text` (IPv6 scope ids allowed), or None when it is a name."""
    try:
        return ip_address(text)
    except ValueError:
        return None
