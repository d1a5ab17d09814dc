"""The two ways of proving a domain (TXT record, well-known file), and trying both."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from almanac.platform.publishing.models import ProofWay

TXT_PREFIX = "_almanac-verify"
VALUE_PREFIX = "almanac-verify="
WELL_KNOWN_PATH = "/.well-known/almanac-verify.txt"
_SHOWN = 80


def txt_name(domain: str) -> str:
    """Where the TXT record goes: `_almanac-verify.<domain>`."""
    return f"{TXT_PREFIX}.{domain}"


def proof_value(token: str) -> str:
    """What the TXT record and the file hold: `almanac-verify=<token>`."""
    return f"{VALUE_PREFIX}{token}"


def well_known_url(domain: str) -> str:
    """Where the file goes: `https://<domain>/.well-known/almanac-verify.txt`."""
    return f"https://{domain}{WELL_KNOWN_PATH}"


class TxtLookupFailed(Exception):
    """No TXT answer could be had: no such name, a time-out, a failing server. The message
    says which, for the person checking the domain."""


class TxtLookup(Protocol):
    def txt(self, name: str) -> list[str]:
        """The texts of the TXT records at `name` (each record's strings joined); an empty
        list when the name has none. Raise TxtLookupFailed when no answer can be had."""
        ...


class FileFetchFailed(Exception):
    """The well-known file could not be fetched; the message says why."""


class WellKnownFetcher(Protocol):
    def fetch(self, domain: str, now: datetime) -> bytes:
        """The body of `well_known_url(domain)`, fetched by the safe downloader's rules; raise
        FileFetchFailed when it cannot be had."""
        ...


@dataclass(frozen=True, slots=True)
class WayResult:
    """What one way found: proved or not, and a sentence saying what was there."""

    way: ProofWay
    proved: bool
    detail: str


@dataclass(frozen=True, slots=True)
class ProofResult:
    dns: WayResult
    file: WayResult

    @property
    def proved_by(self) -> ProofWay | None:
        """The way that proved the domain (DNS when both did), or None."""
        if self.dns.proved:
            return ProofWay.DNS
        if self.file.proved:
            return ProofWay.FILE
        return None


def _shown(text: str) -> str:
    cut = text[:_SHOWN]
    safe = "".join(c if c.isprintable() else "?" for c in cut)
    return repr(safe + ("..." if len(text) > _SHOWN else ""))


def judge_txt(domain: str, token: str, texts: list[str]) -> WayResult:
    """ "Authentication" 2 and DECISIONS 1: proved when a TXT record at
    `_almanac-verify.<domain>` holds exactly `almanac-verify=<token>` (surrounding white space
    aside; a record's character strings joined)."""
    wanted = proof_value(token)
    name = txt_name(domain)
    if any(text.strip() == wanted for text in texts):
        return WayResult(ProofWay.DNS, True, f"the TXT record at {name} holds the value")
    if not texts:
        return WayResult(ProofWay.DNS, False, f"{name} has no TXT record")
    found = ", ".join(_shown(t) for t in texts[:3])
    return WayResult(ProofWay.DNS, False, f"the TXT records at {name} hold {found}, not {wanted!r}")


def judge_file(domain: str, token: str, body: bytes) -> WayResult:
    """ "Authentication" 2 and DECISIONS 1: proved when the file at
    `https://<domain>/.well-known/almanac-verify.txt` holds exactly `almanac-verify=<token>`
    (surrounding white space and a byte order mark aside)."""
    wanted = proof_value(token)
    url = well_known_url(domain)
    text = body.decode("utf-8", errors="replace").lstrip("\ufeff").strip()
    if text == wanted:
        return WayResult(ProofWay.FILE, True, f"{url} holds the value")
    return WayResult(ProofWay.FILE, False, f"{url} holds {_shown(text)}, not {wanted!r}")


class DomainProver:
    """Tries both ways of proving a domain: the TXT record through `txt`, the well-known file
    through `files`. A way that cannot be tried (NXDOMAIN, time-out, SERVFAIL, a download
    refused) is "not proved yet", never an error."""

    def __init__(self, txt: TxtLookup, files: WellKnownFetcher) -> None:
        self._txt = txt
        self._files = files

    def prove(self, domain: str, token: str, now: datetime) -> ProofResult:
        try:
            dns_result = judge_txt(domain, token, self._txt.txt(txt_name(domain)))
        except TxtLookupFailed as failed:
            dns_result = WayResult(ProofWay.DNS, False, str(failed))
        try:
            file_result = judge_file(domain, token, self._files.fetch(domain, now))
        except FileFetchFailed as failed:
            file_result = WayResult(ProofWay.FILE, False, str(failed))
        return ProofResult(dns=dns_result, file=file_result)
