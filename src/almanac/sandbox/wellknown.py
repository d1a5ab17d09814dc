"""The domain proof's well-known file, fetched by the source downloader ("Authentication" 2),
and the domain prover the API and the re-check assemble from settings.

The file is one download by `SourceDownloader` with the domain as its one declared host: https
only, public addresses only (every resolved address checked), no credentials or cookies, at
most 5 redirects and each to the same domain (a redirect to another host, a subdomain
included, is refused), at most `FILE_MAX_BYTES` within `FILE_DEADLINE_SECONDS`.
"""

from __future__ import annotations

import ssl
import tempfile
from datetime import date, datetime
from pathlib import Path

import httpx

from almanac.platform.publishing.identity.proof import (
    WELL_KNOWN_PATH,
    DomainProver,
    FileFetchFailed,
    well_known_url,
)
from almanac.sandbox.dns_txt import DnsPythonTxt
from almanac.sandbox.download import Dialer, DownloadError, Source, SourceDownloader
from almanac.sandbox.resolver import Resolver
from almanac.settings import Settings

FILE_MAX_BYTES = 1024
"""The file holds one short line; anything larger is not a proof."""
FILE_DEADLINE_SECONDS = 10.0
_SOURCE_NAME = "almanac-verify"


class WellKnownDownload:
    """`WellKnownFetcher` through the source downloader (`resolver`, `dialer` and
    `ssl_context` as `SourceDownloader` takes them; tests point them at loopback)."""

    def __init__(
        self,
        *,
        base_url: str,
        resolver: Resolver | None = None,
        dialer: Dialer | None = None,
        ssl_context: ssl.SSLContext | None = None,
        deadline_seconds: float = FILE_DEADLINE_SECONDS,
    ) -> None:
        self._base_url = base_url
        self._resolver = resolver
        self._dialer = dialer
        # Made once: a context loads the whole CA bundle, and a downloader is made per check
        # (its clock is the check's moment).
        self._ssl_context = ssl_context or httpx.create_ssl_context(trust_env=False)
        self._deadline_seconds = deadline_seconds

    def fetch(self, domain: str, now: datetime) -> bytes:
        downloader = SourceDownloader(
            base_url=self._base_url,
            clock=lambda: now,
            resolver=self._resolver,
            dialer=self._dialer,
            ssl_context=self._ssl_context,
            deadline_seconds=self._deadline_seconds,
        )
        url = well_known_url(domain)
        assert url.endswith(WELL_KNOWN_PATH) and "{" not in url
        with tempfile.TemporaryDirectory(prefix="almanac-verify-") as work:
            try:
                downloads = downloader.download(
                    [Source(name=_SOURCE_NAME, url=url, max_bytes=FILE_MAX_BYTES)],
                    today=date(2000, 1, 1),  # the URL has no placeholders to fill
                    work_dir=Path(work),
                )
            except DownloadError as failed:
                detail = failed.detail.replace(
                    "is not a host any source names", f"is not {domain}, the domain proved"
                )
                raise FileFetchFailed(f"{url}: {detail}") from None
            return downloads.sources[0].path.read_bytes()


def domain_prover(settings: Settings) -> DomainProver:
    """The prover of the running service: TXT records through the DNS servers of
    `ALMANAC_DNS_SERVERS` (or the system's), the file through the source downloader."""
    return DomainProver(
        txt=DnsPythonTxt(settings.dns_servers),
        files=WellKnownDownload(base_url=settings.base_url),
    )
