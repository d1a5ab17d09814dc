"""The two ways of proving a domain against a real DNS server and a real HTTPS site on
loopback ("Authentication" 2; DECISIONS 1 and 7): each succeeds; a wrong value, NXDOMAIN,
SERVFAIL, a time-out, a redirect to another domain, a large file and a private address do not
prove, and none of them is an error."""

from __future__ import annotations

import ssl
import time
from datetime import UTC, datetime
from ipaddress import ip_address

import pytest

from almanac.platform.publishing.identity.proof import (
    WELL_KNOWN_PATH,
    DomainProver,
    TxtLookupFailed,
    proof_value,
)
from almanac.platform.publishing.models import ProofWay
from almanac.sandbox.addresses import IPAddress
from almanac.sandbox.dns_txt import DnsPythonTxt
from almanac.sandbox.wellknown import FILE_MAX_BYTES, WellKnownDownload
from almanac.settings import load_settings, parse_dns_servers
from tests.publishing.servers import NO_ANSWER, SERVFAIL, ProofWorld
from tests.sandbox.tls_server import LoopbackDialer

NOW = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
BANK = "examplebank.org"
TOKEN = "Zq3-token_example"


def test_the_txt_record_proves_the_domain(world: ProofWorld) -> None:
    world.dns.publish(BANK, "v=spf1 -all", proof_value(TOKEN))
    result = world.prover().prove(BANK, TOKEN, NOW)
    assert result.dns.proved and result.proved_by is ProofWay.DNS
    assert not result.file.proved and "HTTP 404" in result.file.detail
    assert world.dns.table.queries == [f"_almanac-verify.{BANK}"]


def test_a_txt_value_split_into_strings_is_joined(world: ProofWorld) -> None:
    long_token = "t" * 300  # stored as two character strings of one record
    world.dns.publish(BANK, proof_value(long_token))
    assert world.prover().prove(BANK, long_token, NOW).dns.proved


def test_the_well_known_file_proves_the_domain(world: ProofWorld) -> None:
    world.site.serve_token(BANK, TOKEN)
    result = world.prover().prove(BANK, TOKEN, NOW)
    assert result.file.proved and result.proved_by is ProofWay.FILE
    assert not result.dns.proved and "NXDOMAIN" in result.dns.detail
    assert world.site.requests == [WELL_KNOWN_PATH]


def test_both_ways_proving_record_dns(world: ProofWorld) -> None:
    world.dns.publish(BANK, proof_value(TOKEN))
    world.site.serve(BANK, b"\xef\xbb\xbf" + proof_value(TOKEN).encode() + b"\r\n")
    result = world.prover().prove(BANK, TOKEN, NOW)
    assert result.dns.proved and result.file.proved
    assert result.proved_by is ProofWay.DNS


def test_a_wrong_value_proves_nothing_and_says_what_was_found(world: ProofWorld) -> None:
    world.dns.publish(BANK, proof_value("someone-else"))
    world.site.serve(BANK, b"almanac-verify=old-token\n")
    result = world.prover().prove(BANK, TOKEN, NOW)
    assert result.proved_by is None
    assert "almanac-verify=someone-else" in result.dns.detail
    assert "almanac-verify=old-token" in result.file.detail
    assert proof_value(TOKEN) in result.dns.detail


def test_nxdomain_and_servfail_are_not_proved_yet(world: ProofWorld) -> None:
    result = world.prover().prove(BANK, TOKEN, NOW)
    assert not result.dns.proved and "NXDOMAIN" in result.dns.detail
    world.dns.behave(BANK, SERVFAIL)
    result = world.prover().prove(BANK, TOKEN, NOW)
    assert not result.dns.proved and "SERVFAIL" in result.dns.detail


def test_a_dns_time_out_is_not_proved_yet_and_ends_in_time(world: ProofWorld) -> None:
    world.dns.behave(BANK, NO_ANSWER)
    world.site.serve_token(BANK, TOKEN)
    started = time.monotonic()
    result = world.prover(dns_timeout=1.0).prove(BANK, TOKEN, NOW)
    assert time.monotonic() - started < 5
    assert not result.dns.proved and "no DNS answer" in result.dns.detail
    assert result.proved_by is ProofWay.FILE  # the other way is still tried
    with pytest.raises(TxtLookupFailed, match="within 1 s"):
        world.dns.lookup(1.0).txt(f"_almanac-verify.{BANK}")


def test_a_redirect_to_another_domain_proves_nothing(world: ProofWorld) -> None:
    world.site.redirect(BANK, f"https://other.example.com{WELL_KNOWN_PATH}")
    world.site.serve_token("other.example.com", TOKEN)
    result = world.prover().prove(BANK, TOKEN, NOW)
    assert not result.file.proved
    assert "redirect refused" in result.file.detail and "other.example.com" in result.file.detail
    assert world.site.requests == [WELL_KNOWN_PATH]  # never followed
    # A subdomain is another host too: the file is proved from the domain itself.
    world.site.redirect(BANK, f"https://www.{BANK}{WELL_KNOWN_PATH}")
    world.site.serve_token(f"www.{BANK}", TOKEN)
    assert not world.prover().prove(BANK, TOKEN, NOW).file.proved


def test_a_redirect_within_the_same_domain_is_followed(world: ProofWorld) -> None:
    world.site.redirect(BANK, "/moved.txt")
    world.site.serve(BANK, proof_value(TOKEN).encode(), path="/moved.txt")
    result = world.prover().prove(BANK, TOKEN, NOW)
    assert result.file.proved
    assert world.site.requests == [WELL_KNOWN_PATH, "/moved.txt"]


def test_more_than_five_redirects_prove_nothing(world: ProofWorld) -> None:
    world.site.redirect(BANK, "/moved.txt")
    world.site.redirect(BANK, "/moved.txt", path="/moved.txt")  # a loop on the same domain
    result = world.prover().prove(BANK, TOKEN, NOW)
    assert not result.file.proved and "more than 5 redirects" in result.file.detail


def test_a_large_file_proves_nothing(world: ProofWorld) -> None:
    world.site.serve(BANK, proof_value(TOKEN).encode() + b" " * FILE_MAX_BYTES)
    result = world.prover().prove(BANK, TOKEN, NOW)
    assert not result.file.proved and "larger than maxBytes" in result.file.detail


class _Answers:
    def __init__(self, address: str) -> None:
        self.address = address

    def resolve(self, host: str, port: int, timeout: float) -> list[IPAddress]:
        return [ip_address(self.address)]


@pytest.mark.parametrize("address", ["127.0.0.1", "10.1.2.3", "192.168.1.1", "::1"])
def test_a_domain_resolving_to_a_non_public_address_is_never_reached(
    world: ProofWorld, address: str
) -> None:
    world.site.serve_token(BANK, TOKEN)
    dialer = LoopbackDialer({})
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    world.site.ca.configure_trust(context)
    files = WellKnownDownload(
        base_url="https://almanac.test",
        resolver=_Answers(address),
        dialer=dialer,
        ssl_context=context,
    )
    result = DomainProver(world.dns.lookup(), files).prove(BANK, TOKEN, NOW)
    assert not result.file.proved and "refused" in result.file.detail
    assert dialer.dialed == []


def test_the_file_request_sends_no_credentials(world: ProofWorld) -> None:
    world.site.serve_token(BANK, TOKEN)
    assert world.prover().prove(BANK, TOKEN, NOW).file.proved
    [request] = world.site._server.requests
    assert "authorization" not in request.headers and "cookie" not in request.headers
    assert request.headers["user-agent"].startswith("Almanac plug-ins (+")


def test_almanac_dns_servers_names_the_resolver() -> None:
    assert load_settings({}).dns_servers == ()
    assert parse_dns_servers("127.0.0.1:5353, [::1]:53,10.0.0.53") == (
        ("127.0.0.1", 5353),
        ("::1", 53),
        ("10.0.0.53", 53),
    )
    assert load_settings({"ALMANAC_DNS_SERVERS": "127.0.0.1:5300"}).dns_servers == (
        ("127.0.0.1", 5300),
    )
    for wrong in ("dns.example:53", "127.0.0.1:0", "127.0.0.1:dns", "[::1]x"):
        with pytest.raises(ValueError, match="ALMANAC_DNS_SERVERS"):
            parse_dns_servers(wrong)


def test_the_configured_resolver_asks_the_server_given(world: ProofWorld) -> None:
    world.dns.publish(BANK, proof_value(TOKEN))
    settings = load_settings({"ALMANAC_DNS_SERVERS": f"127.0.0.1:{world.dns.port}"})
    assert DnsPythonTxt(settings.dns_servers).txt(f"_almanac-verify.{BANK}") == [proof_value(TOKEN)]
    assert world.dns.table.queries == [f"_almanac-verify.{BANK}"]
