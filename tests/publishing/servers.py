"""Real servers on loopback for the domain proof: a DNS server (dnslib) answering TXT queries
from a table the test changes, and an HTTPS site (the downloader tests' TLS server, signed by a
test CA) serving the well-known file for any domain the test names. Nothing leaves loopback:
the site's names resolve, through the downloader's own resolver interface, to a public
stand-in address that the test dialer carries to the loopback server."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from ipaddress import ip_address

import trustme
from dnslib import QTYPE, RCODE, RR, TXT, DNSError, DNSRecord
from dnslib.server import BaseResolver, DNSHandler, DNSLogger, DNSServer

from almanac.platform.publishing.identity.proof import WELL_KNOWN_PATH, DomainProver, proof_value
from almanac.sandbox.addresses import IPAddress
from almanac.sandbox.dns_txt import DnsPythonTxt
from almanac.sandbox.resolver import ResolveError
from almanac.sandbox.wellknown import WellKnownDownload
from tests.sandbox.tls_server import Handler, LoopbackDialer, TLSServer

PUBLIC_STAND_IN = "93.184.216.34"
BASE_URL = "https://almanac.test"

SERVFAIL = "servfail"
NO_ANSWER = "timeout"


class _Quiet(DNSLogger):
    def __init__(self) -> None:
        super().__init__(log="-request,-reply,-truncated,-error,-recv,-send,-data")


@dataclass
class TxtTable(BaseResolver):
    """Answers TXT queries from `records` (name -> texts); a name mapped to SERVFAIL answers
    SERVFAIL, one mapped to NO_ANSWER is never answered (the client times out); any other name
    is NXDOMAIN. `queries` records every name asked."""

    records: dict[str, list[str] | str] = field(default_factory=dict)
    queries: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def resolve(self, request: DNSRecord, handler: DNSHandler) -> DNSRecord:
        name = str(request.q.qname).rstrip(".").lower()
        with self.lock:
            self.queries.append(name)
            answer = self.records.get(name)
        reply = request.reply()
        if answer == NO_ANSWER:
            raise DNSError("no answer on purpose")  # the handler sends nothing
        if answer == SERVFAIL:
            reply.header.rcode = RCODE.SERVFAIL
        elif answer is None:
            reply.header.rcode = RCODE.NXDOMAIN
        elif request.q.qtype == QTYPE.TXT:
            for text in answer:
                # A TXT record holds character strings of at most 255 bytes each.
                data = text.encode()
                chunks = [data[i : i + 255] for i in range(0, len(data), 255)] or [b""]
                reply.add_answer(RR(name, QTYPE.TXT, rdata=TXT(chunks), ttl=60))
        return reply


class TxtServer:
    """dnslib's DNS server on 127.0.0.1 (a free UDP port) over a `TxtTable`."""

    def __init__(self) -> None:
        self.table = TxtTable()
        self._server = DNSServer(self.table, address="127.0.0.1", port=0, logger=_Quiet())
        self.port: int = self._server.server.server_address[1]

    @property
    def address(self) -> tuple[str, int]:
        return ("127.0.0.1", self.port)

    def publish(self, domain: str, *texts: str) -> None:
        """TXT records at `_almanac-verify.<domain>`."""
        self.table.records[f"_almanac-verify.{domain}"] = list(texts)

    def behave(self, domain: str, how: str) -> None:
        """SERVFAIL or NO_ANSWER for `_almanac-verify.<domain>`."""
        self.table.records[f"_almanac-verify.{domain}"] = how

    def remove(self, domain: str) -> None:
        self.table.records.pop(f"_almanac-verify.{domain}", None)

    def lookup(self, timeout: float = 1.0) -> DnsPythonTxt:
        """The service's TXT look-up pointed at this server (as ALMANAC_DNS_SERVERS does)."""
        return DnsPythonTxt([self.address], timeout=timeout)

    def __enter__(self) -> TxtServer:
        self._server.start_thread()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()
        self._server.server.server_close()


class AnyNameResolver:
    """The downloader's resolver for the site: every name in `names` is the public stand-in
    address; any other is unknown."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def resolve(self, host: str, port: int, timeout: float) -> list[IPAddress]:
        if host not in self.names:
            raise ResolveError(f"could not resolve {host}: not a test name")
        return [ip_address(PUBLIC_STAND_IN)]


class ProofSite:
    """An HTTPS server on loopback with a certificate for `hostnames`, whose well-known files
    the test sets per domain (the Host header tells the domains apart)."""

    def __init__(self, hostnames: tuple[str, ...]) -> None:
        self.ca = trustme.CA()
        self.files: dict[str, tuple[int, bytes, dict[str, str]]] = {}
        self.resolver = AnyNameResolver()
        self.resolver.names.update(hostnames)
        self._server = TLSServer(self.ca, hostnames)
        self._server.routes[WELL_KNOWN_PATH] = self._answer
        self._server.routes["/moved.txt"] = self._answer

    def _answer(self, handler: Handler) -> None:
        host = (handler.headers.get("Host") or "").split(":")[0].lower()
        status, body, headers = self.files.get(f"{host}{handler.path}", (404, b"not here", {}))
        handler.reply(status, body, headers)

    @property
    def requests(self) -> list[str]:
        return [r.path for r in self._server.requests]

    def serve(self, domain: str, body: bytes, path: str = WELL_KNOWN_PATH) -> None:
        self.files[f"{domain}{path}"] = (200, body, {"Content-Type": "text/plain"})

    def serve_token(self, domain: str, token: str) -> None:
        self.serve(domain, (proof_value(token) + "\n").encode())

    def redirect(self, domain: str, location: str, path: str = WELL_KNOWN_PATH) -> None:
        self.files[f"{domain}{path}"] = (302, b"", {"Location": location})

    def remove(self, domain: str) -> None:
        self.files.pop(f"{domain}{WELL_KNOWN_PATH}", None)

    def fetcher(self) -> WellKnownDownload:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self.ca.configure_trust(context)
        return WellKnownDownload(
            base_url=BASE_URL,
            resolver=self.resolver,
            dialer=LoopbackDialer({PUBLIC_STAND_IN: self._server.port}),
            ssl_context=context,
            deadline_seconds=5,
        )

    def __enter__(self) -> ProofSite:
        self._server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.__exit__(*exc)


@dataclass
class ProofWorld:
    """The DNS server and the HTTPS site together, and the service's prover pointed at them."""

    dns: TxtServer
    site: ProofSite

    def prover(self, dns_timeout: float = 1.0) -> DomainProver:
        return DomainProver(txt=self.dns.lookup(dns_timeout), files=self.site.fetcher())


SITE_NAMES = (
    "examplebank.org",
    "www.examplebank.org",
    "rates.example.net",
    "other.example.com",
    "lapsing.example",
)


@contextmanager
def proof_world(names: tuple[str, ...] = SITE_NAMES) -> Iterator[ProofWorld]:
    with TxtServer() as dns, ProofSite(names) as site:
        yield ProofWorld(dns, site)
