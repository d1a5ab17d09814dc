"""The production dialer end to end, in a network namespace of our own: the checked public
address 93.184.216.34 is put on the namespace's own loopback device, a TLS server listens there
on port 443, and the downloader reaches it with its production dialer. The connection is real
and still never leaves the machine. The namespace has no other route and no name server: the
production resolver gets no answer and another public address has no route, which is how a
service without a network fails. The test runs this module as a child in the namespace."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, date, datetime
from pathlib import Path

import trustme

from almanac.platform.publishing.uploads.network import HostFailure
from almanac.sandbox.download import DownloadError, Source, SourceDownloader
from tests.conftest import REPO
from tests.sandbox.tls_server import TableResolver, TLSServer, client_context

PUBLIC = "93.184.216.34"
NO_ROUTE = "93.184.216.35"
HOST = "rates.example.org"


def _failure(downloader: SourceDownloader, url: str, work: str) -> list[str]:
    try:
        downloader.download([Source("s", url)], today=date(2026, 3, 7), work_dir=Path(work))
    except DownloadError as exc:
        return [str(exc.failure), exc.reason]
    return ["reached", ""]


def main() -> None:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["ip", "addr", "add", f"{PUBLIC}/32", "dev", "lo"], check=True)
    ca = trustme.CA()
    with TLSServer(ca, (HOST,), bind=(PUBLIC, 443)) as server:
        server.routes["/rates.csv"] = lambda h: h.reply(200, b"date,rate\n")
        downloader = SourceDownloader(  # production dialer: a real connection to the address
            base_url="https://almanac.test",
            clock=lambda: datetime(2026, 3, 7, tzinfo=UTC),
            resolver=TableResolver(
                {HOST: [PUBLIC], "loop.example.org": ["127.0.0.1"], "far.example.org": [NO_ROUTE]}
            ),
            ssl_context=client_context(ca),
            deadline_seconds=5,
        )
        with tempfile.TemporaryDirectory() as work:
            got = downloader.download(
                [Source("rates", f"https://{HOST}/rates.csv")],
                today=date(2026, 3, 7),
                work_dir=Path(work),
            )
            kept = got.sources[0]
            try:
                downloader.download(
                    [Source("loop", "https://loop.example.org/rates.csv")],
                    today=date(2026, 3, 7),
                    work_dir=Path(work),
                )
                refused = None
            except DownloadError as exc:
                refused = exc.reason
            no_route = _failure(downloader, "https://far.example.org/rates.csv", work)
            production = SourceDownloader(base_url="https://almanac.test", deadline_seconds=5)
            no_name_server = _failure(production, f"https://{HOST}/rates.csv", work)
        result = {
            "bytes": kept.bytes,
            "url": kept.url,
            "sni": server.sni,
            "paths": [r.path for r in server.requests],
            "refused": refused,
            "no_route": no_route,
            "no_name_server": no_name_server,
        }
    json.dump(result, sys.stdout)
    print()


def test_the_production_dialer_reaches_a_checked_public_address() -> None:
    unshare = shutil.which("unshare")
    assert unshare, "util-linux unshare is needed (the locked room needs namespaces too)"
    done = subprocess.run(
        [
            unshare,
            "--user",
            "--map-root-user",
            "--net",
            sys.executable,
            "-m",
            "tests.sandbox.test_download_netns",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["bytes"] == len(b"date,rate\n")
    assert result["url"] == "https://rates.example.org/rates.csv"
    assert result["sni"] == ["rates.example.org"]
    assert result["paths"] == ["/rates.csv"]
    assert result["refused"].startswith(
        "could not download loop: loop.example.org resolves to 127.0.0.1"
    )
    # Nothing outside the machine answered: what the upload checks read as the service's own
    # network being down (almanac.platform.publishing.uploads.network).
    assert result["no_route"][0] == HostFailure.NO_ROUTE, result["no_route"]
    assert "Network is unreachable" in result["no_route"][1]
    assert result["no_name_server"][0] == HostFailure.NO_NAME_ANSWER, result["no_name_server"]
    assert f"could not resolve {HOST}" in result["no_name_server"][1]


if __name__ == "__main__":
    main()
