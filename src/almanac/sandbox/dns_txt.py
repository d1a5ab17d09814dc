"""DNS TXT look-ups for the domain proof through dnspython: the `TxtLookup` of
`platform/publishing/identity/proof.py`."""

from __future__ import annotations

from collections.abc import Sequence

import dns.exception
import dns.nameserver
import dns.rdatatype
import dns.rdtypes.ANY.TXT
import dns.resolver

from almanac.platform.publishing.identity.proof import TxtLookupFailed

DNS_TIMEOUT_SECONDS = 5.0
"""How long one TXT look-up may take, every server and retry included."""


class DnsPythonTxt:
    """TXT look-ups through dnspython: to `servers` ((address, port) pairs) when given, else
    to the servers of the system's resolver configuration."""

    def __init__(
        self, servers: Sequence[tuple[str, int]] = (), timeout: float = DNS_TIMEOUT_SECONDS
    ) -> None:
        self._servers = tuple(servers)
        self._timeout = timeout

    def _resolver(self) -> dns.resolver.Resolver:
        """A resolver for one look-up; the system's configuration is read then, so a machine
        without one fails the look-up, not the service's start."""
        if self._servers:
            resolver = dns.resolver.Resolver(configure=False)
            resolver.nameservers = [
                dns.nameserver.Do53Nameserver(address, port) for address, port in self._servers
            ]
        else:
            resolver = dns.resolver.Resolver()
        resolver.lifetime = self._timeout
        resolver.timeout = min(resolver.timeout, self._timeout)
        resolver.cache = None
        return resolver

    def txt(self, name: str) -> list[str]:
        try:
            answer = self._resolver().resolve(
                name, dns.rdatatype.TXT, raise_on_no_answer=False, search=False
            )
        except dns.resolver.NXDOMAIN:
            raise TxtLookupFailed(f"{name} does not exist in DNS (NXDOMAIN)") from None
        except dns.exception.Timeout:
            raise TxtLookupFailed(
                f"no DNS answer for {name} within {self._timeout:g} s; try again later"
            ) from None
        except dns.resolver.NoNameservers:
            raise TxtLookupFailed(
                f"the DNS servers failed to answer for {name} (SERVFAIL or refused); try "
                "again later"
            ) from None
        except dns.resolver.NoResolverConfiguration:
            raise TxtLookupFailed(
                "no DNS resolver is configured on the service's machine (ALMANAC_DNS_SERVERS)"
            ) from None
        except dns.exception.DNSException as exc:
            raise TxtLookupFailed(f"the DNS look-up of {name} failed: {exc}") from None
        texts: list[str] = []
        for record in answer.rrset or ():
            if isinstance(record, dns.rdtypes.ANY.TXT.TXT):
                joined = b"".join(record.strings)
                texts.append(joined.decode("utf-8", errors="replace"))
        return texts
