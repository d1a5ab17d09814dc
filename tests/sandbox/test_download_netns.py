"""The production dialer end to end, in a network namespace of our own: the checked public
address 93.184.216.34 is put on the namespace's own loopback device, a TLS server listens there
on port 443, and the downloader reaches it with its production dialer. The connection is real
and still never leaves the machine. The test runs this module as a child in the namespace."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, date, datetime
from pathlib import Path

import trustme

from almanac.sandbox.download import DownloadError, Source, SourceDownloader
from tests.conftest import REPO
from tests.sandbox.tls_server import TableResolver, TLSServer, client_context

PUBLIC = "93.184.216.34"
HOST = "rates.example.org"


def main() -> None:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["ip", "addr", "add", f"{PUBLIC}/32", "dev", "lo"], check=True)
    ca = trustme.CA()
    with TLSServer(ca, (HOST,), bind=(PUBLIC, 443)) as server:
        server.routes["/rates.csv"] = lambda h: h.reply(200, b"date,rate\n")
        downloader = SourceDownloader(  # production dialer: a real connection to the address
            base_url="https://almanac.test",
            clock=lambda: datetime(2026, 3, 7, tzinfo=UTC),
            resolver=TableResolver({HOST: [PUBLIC], "loop.example.org": ["127.0.0.1"]}),
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
        result = {
            "bytes": kept.bytes,
            "url": kept.url,
            "sni": server.sni,
            "paths": [r.path for r in server.requests],
            "refused": refused,
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


if __name__ == "__main__":
    main()
