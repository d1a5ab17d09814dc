"""Which domain names an organization may name as its own ("Authentication" 2)."""

from __future__ import annotations

import ipaddress
from functools import cache

from publicsuffixlist import PublicSuffixList

from almanac.platform.accounts.invitations import normalize_domain
from almanac.platform.errors import Invalid


@cache
def _lists() -> tuple[PublicSuffixList, PublicSuffixList]:
    """The Public Suffix List in full (its private section of shared-hosting domains included)
    and its ICANN section alone, as shipped by the `publicsuffixlist` package."""
    return PublicSuffixList(), PublicSuffixList(only_icann=True)


def claimable_domain(text: str) -> str:
    """The domain in lower-case ASCII (IDNA) without a final dot, or refused ("Authentication"
    2): an IP address (DOMAIN-IP-ADDRESS), a name with no dot (DOMAIN-NO-DOT), anything not
    a host name (DOMAIN-INVALID), a public suffix such as `co.uk` or `github.io`
    (DOMAIN-PUBLIC-SUFFIX), and a name under a shared-hosting suffix of the list's private
    section such as `someone.github.io` (DOMAIN-SHARED-HOSTING): whoever controls such a
    name is one tenant of a host, not the holder of a domain."""
    name = text.strip().lower().rstrip(".")
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        pass
    else:
        raise Invalid(
            f"domain: {name!r} is an IP address; name a domain, such as example.org",
            code="DOMAIN-IP-ADDRESS",
        )
    if "." not in name:
        raise Invalid(
            f"domain: {name!r} has no dot; name a whole domain, such as example.org",
            code="DOMAIN-NO-DOT",
        )
    try:
        name = normalize_domain(name)
    except Invalid as refused:
        raise Invalid(refused.detail, code="DOMAIN-INVALID") from None
    full, icann = _lists()
    if full.is_public(name):
        raise Invalid(
            f"domain: {name} is a public suffix, under which anyone may register names; "
            "name your own domain below it",
            code="DOMAIN-PUBLIC-SUFFIX",
        )
    shared = full.publicsuffix(name)
    if shared != icann.publicsuffix(name):
        raise Invalid(
            f"domain: {name} is a name on the shared hosting domain {shared}; name a domain "
            "of your own",
            code="DOMAIN-SHARED-HOSTING",
        )
    return name
