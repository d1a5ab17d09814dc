"""Syntax rules shared by the static checks of the manifest and of records (contract 1).

Each rule here is the one place its spec sentence lives; `manifest.py` and `records.py` only
decide which catalog code a broken rule reports. Lengths count Unicode code points (the Node
tool counts `[...text].length`, not UTF-16 units), so both implementations agree.
"""

from __future__ import annotations

import json
import math
import re
import zoneinfo
from datetime import date
from functools import cache
from typing import Any

KEY_PATTERN = re.compile(r"[a-z][a-z0-9_-]{0,47}")
"""Key (source, series, field): lowercase letters, digits, hyphens and underscores, starting
with a letter, 1 to 48 characters (spec "Key")."""

ID_PATTERN = re.compile(r"[a-z][a-z0-9-]{1,47}")
"""Plug-in id: lowercase letters, digits, hyphens, starting with a letter, 2 to 48 characters."""

LANGUAGE_PATTERN = re.compile(r"[a-z]{2,3}(?:-(?:[A-Z]{2}|[0-9]{3}))?")
"""Names key: a two- or three-letter language code, optionally with a region (`pt-BR`, `es-419`)."""

VERSION_PATTERN = re.compile(r"(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)")
"""Plug-in version: major.minor.patch, non-negative integers without leading zeros."""

DATE_PATTERN = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
HOST_PATTERN = re.compile(rf"{_LABEL}(?:\.{_LABEL})+")
"""A lowercase DNS host name of at least two labels; IP addresses are refused separately."""

_IPV4_LIKE = re.compile(r"(?:.*\.)?(?:[0-9]+|0[xX][0-9a-fA-F]*)\.?")
"""A host whose last label is a number (decimal, or hex written 0x...): WHATWG URL parsers
("ends in a number") read such hosts as IPv4."""

PLACEHOLDER_PATTERN = re.compile(r"\{([^{}]*)\}")
URL_PLACEHOLDERS = frozenset({"today", "year", "month"})

_URL_PATTERN = re.compile(r"https://([^/?#]*)([/?#].*)?", re.DOTALL)
_PORT_PATTERN = re.compile(r"[0-9]{1,5}")
_BAD_URL_CHARACTER = re.compile(r"[\x00-\x20\x7f\\]")

MARKUP_PATTERN = re.compile(r"<[A-Za-z/!?]|&(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#[xX][0-9A-Fa-f]+);")
"""Markup in plain text: an HTML tag, end tag, comment or declaration, or a character reference.
A lone `<` or `&` ("5 < 6", "R&D") is plain text."""

CONTROL_PATTERN = re.compile(r"[\x00-\x1f\x7f]")
WHITESPACE_OR_CONTROL = re.compile(
    "[\x00-\x20\x7f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
)
"""Characters an id may not hold: control characters and every character Python's or
JavaScript's `\\s` counts as whitespace, listed explicitly so both implementations agree."""

MAX_FLOAT = 1.7976931348623157e308


def version_key(version: str) -> tuple[int, int, int]:
    """A version that matched `VERSION_PATTERN` as its three numbers, which compare as
    versions do ("Versioning" 3: new code carries a version greater than every one kept)."""
    major, minor, patch = version.split(".")
    return int(major), int(minor), int(patch)


def is_integer(value: Any) -> bool:
    """A JSON integer: an int, or a float with no fraction (JavaScript cannot tell 1.0 from 1).
    Booleans are not integers."""
    if type(value) is int:
        return True
    return type(value) is float and value.is_integer()


def is_finite_number(value: Any) -> bool:
    """A JSON number JavaScript also reads as finite (not NaN, not Infinity, not above 1.8e308).
    Booleans are not numbers."""
    kind = type(value)
    if kind is float:
        return math.isfinite(value)
    if kind is int:
        return bool(-MAX_FLOAT <= value <= MAX_FLOAT)
    return False


def text_length_within(value: Any, low: int, high: int) -> bool:
    """`value` is a string of `low` to `high` characters (code points)."""
    return isinstance(value, str) and low <= len(value) <= high


def parse_date(text: Any) -> date | None:
    """The real calendar date written YYYY-MM-DD, or None (spec "Records": a date is a real
    calendar date YYYY-MM-DD). Year 0000 does not exist."""
    if not isinstance(text, str) or DATE_PATTERN.fullmatch(text) is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def is_ip_host(host: str) -> bool:
    """An IPv4 or IPv6 literal, or a name a URL parser would read as IPv4 (`1.2.3.4`, `0x7f.1`
    aside: those fail the host pattern anyway)."""
    return host.startswith("[") or ":" in host or _IPV4_LIKE.fullmatch(host) is not None


def host_problem(host: Any) -> str | None:
    """Why `host` is not a lowercase host name of at most 253 characters (no IP address), or
    None when it is one (spec "Source" url and "Links")."""
    if not isinstance(host, str) or not host:
        return "must be a host name"
    if len(host) > 253:
        return f"is {len(host)} characters long; a host name has at most 253"
    if is_ip_host(host):
        return f"{host} is an IP address; use a host name"
    if host != host.lower():
        return f"{host} must be written in lowercase"
    if HOST_PATTERN.fullmatch(host) is None:
        return f"{host} is not a host name (lowercase labels of letters, digits and hyphens)"
    return None


def split_https_url(url: str) -> tuple[str, str] | str:
    """(host, rest) of an https URL, or the reason it is not a plain https URL with a host.

    Refused: another scheme, a user name or password, whitespace, control characters or
    backslashes, an empty host, a port that is not 1 to 5 digits."""
    if not url.startswith("https://"):
        return "must start with https://"
    if _BAD_URL_CHARACTER.search(url):
        return "must not contain spaces, control characters or backslashes"
    match = _URL_PATTERN.fullmatch(url)
    if match is None:
        return "is not an https URL"
    authority, rest = match.group(1), match.group(2) or ""
    if "@" in authority:
        return "must not carry a user name or password"
    host = authority
    if not authority.startswith("[") and ":" in authority:
        host, _, port = authority.partition(":")
        if _PORT_PATTERN.fullmatch(port) is None or not 0 < int(port) < 65536:
            return f"has a bad port {port}"
    elif authority.startswith("[") and "]:" in authority:
        host = authority[: authority.index("]") + 1]
    if not host:
        return "has no host"
    return host, rest


def source_url_problem(url: Any) -> str | None:
    """Why `url` breaks the Source url rule, or None: an https URL with a lowercase host name
    (no IP address, no user name or password), at most 500 characters, whose only `{...}`
    placeholders are `{today}`, `{year}` and `{month}` (outside the host)."""
    if not isinstance(url, str):
        return "must be a string"
    if len(url) > 500:
        return f"is {len(url)} characters long; at most 500"
    parts = split_https_url(url)
    if isinstance(parts, str):
        return parts
    host, rest = parts
    problem = host_problem(host)
    if problem is not None:
        return f"host {problem}"
    for name in PLACEHOLDER_PATTERN.findall(rest):
        if name not in URL_PLACEHOLDERS:
            return f"placeholder {{{name}}} is not one of {{today}}, {{year}}, {{month}}"
    if "{" in PLACEHOLDER_PATTERN.sub("", rest) or "}" in PLACEHOLDER_PATTERN.sub("", rest):
        return "has an unmatched { or }"
    return None


def url_host(url: str) -> str | None:
    """The host of an https URL, or None when `url` is not one."""
    parts = split_https_url(url)
    return None if isinstance(parts, str) else parts[0]


_ZONE_NOT_PLACES = frozenset({"Factory", "localtime", "posixrules"})

OFFSET_ZONE_PATTERN = re.compile(r"^(Etc/)?GMT[+-][0-9]+$")
"""IANA names that are a fixed offset, not a place (`Etc/GMT+5`, `GMT-0`): refused as offsets."""

FIXED_OFFSET_LEGACY_ZONES = frozenset({"EST", "MST", "HST"})
"""Legacy IANA names that are a fixed offset with no place or clock changes: refused too.
`UTC`, `Etc/UTC` and `GMT` stay: they name the reference clock, not an offset from it."""


def is_offset_zone(name: str) -> bool:
    """True for an IANA name that only states an offset (spec "Manifest": an offset is refused)."""
    return name in FIXED_OFFSET_LEGACY_ZONES or OFFSET_ZONE_PATTERN.fullmatch(name) is not None


@cache
def named_zones() -> frozenset[str]:
    """Named IANA zones Almanac accepts: the zoneinfo database's, without its non-places and
    the names that are only a fixed offset (`is_offset_zone`)."""
    zones = zoneinfo.available_timezones() - _ZONE_NOT_PLACES
    return frozenset(zone for zone in zones if not is_offset_zone(zone))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


JSON_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)
"""Strict JSON: NaN, Infinity and -Infinity are refused as JavaScript's JSON.parse refuses them."""
